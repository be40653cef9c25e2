"""A small Wagtail 8 site (tests/apps/wagtail_site): product pages under a "Products" page, edited in
Wagtail's own page editor. It runs in its own virtual environment (.venv/apps/wagtail_site) through
tests/apps/app_process.py; from the tests' side, ``shop.py`` starts it and ``products/records.py``
reads back what it stored."""
