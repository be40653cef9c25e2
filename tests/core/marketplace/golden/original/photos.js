// Thumbnails for the chosen photos appear after a short "processing" delay, as on real sites.
// "Next" is disabled while they are being prepared.
(function () {
  const form = document.getElementById("listing-form");
  const input = document.getElementById("photos");
  const previews = document.getElementById("photo-previews");
  const status = document.getElementById("photo-status");
  const next = document.getElementById("next-button");
  if (!form || !input) return;
  const delay = Number(form.dataset.previewDelayMs || 450);
  let generation = 0;

  function plural(n) { return n + " photo" + (n === 1 ? "" : "s"); }

  input.addEventListener("change", function () {
    const files = Array.from(input.files);
    const mine = ++generation;
    previews.replaceChildren();
    if (files.length === 0) {
      status.textContent = "No photos added yet";
      next.disabled = false;
      return;
    }
    status.textContent = "Preparing " + plural(files.length) + "…";
    next.disabled = true;
    setTimeout(function () {
      if (mine !== generation) return;  // a newer choice replaced this one
      for (const file of files) {
        const figure = document.createElement("figure");
        if (file.type.startsWith("image/")) {
          const img = document.createElement("img");
          img.src = URL.createObjectURL(file);
          img.alt = "Preview of " + file.name;
          figure.appendChild(img);
        }
        const caption = document.createElement("figcaption");
        caption.textContent = file.name;
        figure.appendChild(caption);
        previews.appendChild(figure);
      }
      status.textContent = plural(files.length) + " ready";
      next.disabled = false;
    }, delay);
  });
})();
