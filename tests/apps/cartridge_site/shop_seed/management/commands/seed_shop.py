"""``manage.py seed_shop``: a staff superuser, the shop's categories and its product options.

The names are the test's contract (tests/apps/test_cartridge_replay.py reads them from here through
the harness's query): keep them in step with ``STAFF_*`` and ``CATEGORIES`` there.
"""

from cartridge.shop.models import Category, ProductOption
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

STAFF_USERNAME = "staff"
STAFF_PASSWORD = "cartridge-staff-pass"  # a throwaway test account
CATEGORIES = ("Shoes", "Bags", "Accessories", "Sale", "Gifts")
# (type, name): the types are Cartridge's SHOP_OPTION_TYPE_CHOICES, 1 Size and 2 Colour.
OPTIONS = ((1, "Small"), (1, "Medium"), (1, "Large"), (2, "Red"), (2, "Blue"), (2, "Black"))


class Command(BaseCommand):
    help = "Seed the test shop: a staff superuser, categories and product options."

    def handle(self, *args: object, **options: object) -> None:
        get_user_model().objects.create_superuser(STAFF_USERNAME, "staff@shop.test", STAFF_PASSWORD)
        for title in CATEGORIES:
            Category.objects.create(title=title)
        for option_type, name in OPTIONS:
            ProductOption.objects.create(type=option_type, name=name)
