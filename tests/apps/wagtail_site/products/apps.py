from django.apps import AppConfig


class ProductsConfig(AppConfig):
    name = "products"
    default_auto_field = "django.db.models.AutoField"
