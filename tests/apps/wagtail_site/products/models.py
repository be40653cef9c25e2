"""The shop's pages: a "Products" index and the product pages under it, edited in Wagtail's own
page editor with its own widgets (a select, radio buttons, the date picker, the image chooser,
Draftail for the body with bold and italic, the tag widget)."""

from __future__ import annotations

from django import forms
from django.db import models
from modelcluster.contrib.taggit import ClusterTaggableManager
from modelcluster.fields import ParentalKey
from taggit.models import TaggedItemBase
from wagtail.admin.panels import FieldPanel
from wagtail.fields import RichTextField
from wagtail.models import Page

CATEGORIES = [("footwear", "Footwear"), ("bags", "Bags"), ("outerwear", "Outerwear"), ("accessories", "Accessories")]
CONDITIONS = [("new", "New"), ("like_new", "Like new"), ("used", "Used"), ("refurbished", "Refurbished")]


class ProductsIndexPage(Page):
    """The "Products" section: products, and sections of its own."""

    subpage_types = ["products.ProductPage", "products.ProductsIndexPage"]


class ProductPageTag(TaggedItemBase):
    content_object = ParentalKey("products.ProductPage", related_name="tagged_items", on_delete=models.CASCADE)


class ProductPage(Page):
    sku = models.CharField("SKU", max_length=40)
    price = models.DecimalField(max_digits=8, decimal_places=2)
    category = models.CharField(max_length=20, choices=CATEGORIES)
    condition = models.CharField(max_length=20, choices=CONDITIONS)
    release_date = models.DateField()
    image = models.ForeignKey("wagtailimages.Image", null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    body = RichTextField(features=["bold", "italic"], blank=True)
    tags = ClusterTaggableManager(through=ProductPageTag, blank=True)

    parent_page_types = ["products.ProductsIndexPage"]
    subpage_types: list[str] = []

    content_panels = [
        *Page.content_panels,
        FieldPanel("sku"),
        FieldPanel("price"),
        FieldPanel("category"),
        FieldPanel("condition", widget=forms.RadioSelect),
        FieldPanel("release_date"),
        FieldPanel("image"),
        FieldPanel("body"),
        FieldPanel("tags"),
    ]
