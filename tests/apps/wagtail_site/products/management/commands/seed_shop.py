"""``manage.py seed_shop USERNAME PASSWORD``: what every test starts from — a staff superuser and the
"Products" page under the site's home page (Wagtail's own "Welcome to your new Wagtail site!")."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from products.models import ProductsIndexPage
from wagtail.models import Site


class Command(BaseCommand):
    help = "Create the staff user and the Products page the tests start from."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("password")

    def handle(self, *args: object, username: str, password: str, **options: object) -> None:
        get_user_model().objects.create_superuser(username=username, email=f"{username}@shop.test",
                                                  password=password, first_name="Shop", last_name="Editor")
        home = Site.objects.get(is_default_site=True).root_page
        home.add_child(instance=ProductsIndexPage(title="Products", slug="products"))
