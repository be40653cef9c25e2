// The cookie banner stays until "Accept" is clicked; the choice is remembered in a cookie for a year.
(function () {
  const banner = document.getElementById("cookie-banner");
  const accept = document.getElementById("accept-cookies");
  if (!banner || !accept) return;
  accept.addEventListener("click", function () {
    document.cookie = "cookie_consent=accepted; path=/; max-age=31536000; SameSite=Lax";
    banner.remove();
  });
})();
