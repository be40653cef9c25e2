"""Cartridge's project template URLs: the admin, the shop, and Mezzanine's pages (a catch-all, last)."""

from cartridge.shop.views import order_history
from django.contrib import admin
from django.urls import include, path
from mezzanine.core.views import direct_to_template

admin.autodiscover()

urlpatterns = [
    path("admin/", include(admin.site.urls)),
    path("shop/", include("cartridge.shop.urls")),
    path("account/orders/", order_history, name="shop_order_history"),
    path("", direct_to_template, {"template": "index.html"}, name="home"),
    path("", include("mezzanine.urls")),
]

handler404 = "mezzanine.core.views.page_not_found"
handler500 = "mezzanine.core.views.server_error"
