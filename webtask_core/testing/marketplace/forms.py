"""The new-listing form: its choices and the server-side validation (errors are shown next to fields)."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from io import BytesIO

from PIL import Image, UnidentifiedImageError

__all__ = [
    "CATEGORIES",
    "CONDITIONS",
    "ListingForm",
    "UploadedPhoto",
    "validate_listing_form",
    "validate_edit_form",
    "MAX_QUANTITY",
]

# (value sent by the form, label shown to people and stored on the listing)
CATEGORIES: tuple[tuple[str, str], ...] = (
    ("womens-shoes", "Women's Shoes"),
    ("womens-dresses", "Women's Dresses"),
    ("womens-tops", "Women's Tops"),
    ("womens-jackets", "Women's Jackets"),
    ("mens-shoes", "Men's Shoes"),
    ("mens-jackets", "Men's Jackets"),
    ("mens-shirts", "Men's Shirts"),
    ("kids", "Kids"),
    ("bags", "Bags"),
    ("jewelry", "Jewelry"),
    ("accessories", "Accessories"),
    ("beauty", "Beauty"),
    ("electronics", "Electronics"),
    ("home", "Home"),
    ("toys", "Toys"),
    ("sports-outdoors", "Sports & Outdoors"),
    ("books", "Books"),
)
CONDITIONS: tuple[tuple[str, str], ...] = (
    ("nwt", "New with tags"),
    ("like-new", "Like new"),
    ("good", "Good"),
    ("fair", "Fair"),
)

MAX_PHOTOS = 12
MAX_QUANTITY = 999
MAX_PHOTO_BYTES = 10 * 1024 * 1024
_IMAGE_FORMATS = {"JPEG", "PNG", "GIF", "WEBP"}


@dataclass
class UploadedPhoto:
    filename: str
    content: bytes


@dataclass
class ListingForm:
    """What the browser sent, kept as typed so the form can be shown again unchanged."""

    title: str = ""
    description: str = ""
    price: str = ""
    category: str = ""
    condition: str = ""
    sku: str = ""
    photos: list[UploadedPhoto] = field(default_factory=list)
    quantity: str = ""


@dataclass
class ValidListing:
    title: str
    description: str
    price: float
    category: str  # label
    condition: str  # label
    sku: str
    photos: list[UploadedPhoto]
    quantity: int = 1


def _check_price(raw: str) -> tuple[float | None, str | None]:
    text = raw.strip().removeprefix("$").replace(",", "").strip()
    if not text:
        return None, "Enter a price."
    try:
        amount = Decimal(text)
    except InvalidOperation:
        return None, "Price must be a number, like 45 or 45.99."
    if not amount.is_finite():
        return None, "Price must be a number, like 45 or 45.99."
    if amount <= 0:
        return None, "Price must be greater than $0."
    exponent = amount.as_tuple().exponent
    if isinstance(exponent, int) and exponent < -2:
        return None, "Price can have at most two decimal places."
    if amount > 100_000:
        return None, "Price must be at most $100,000."
    return float(amount), None


def _check_quantity(raw: str) -> tuple[int, str | None]:
    text = raw.strip()
    if not text:
        return 1, None  # optional: one piece
    if not text.isdigit() or not 1 <= int(text) <= MAX_QUANTITY:
        return 1, f"Quantity must be a whole number from 1 to {MAX_QUANTITY}."
    return int(text), None


def _is_image(content: bytes) -> bool:
    try:
        with Image.open(BytesIO(content)) as image:
            image_format = image.format
            image.verify()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError):
        return False
    return image_format in _IMAGE_FORMATS


def _check_photos(photos: list[UploadedPhoto]) -> str | None:
    if not photos:
        return "Add at least one photo."
    if len(photos) > MAX_PHOTOS:
        return f"Add at most {MAX_PHOTOS} photos."
    for photo in photos:
        if len(photo.content) > MAX_PHOTO_BYTES:
            return f"“{photo.filename}” is larger than 10 MB."
        if not _is_image(photo.content):
            return f"“{photo.filename}” is not an image. Add JPEG, PNG, GIF or WebP photos."
    return None


def validate_listing_form(form: ListingForm, *,
                          title_noun: str = "title") -> tuple[ValidListing | None, dict[str, str]]:
    """The cleaned listing, or the errors keyed by field (the title's under "title" whatever the
    layout calls it); `title_noun` is what the messages call the title."""
    listing, errors = validate_edit_form(form, title_noun=title_noun)
    sku = form.sku.strip()
    if not sku:
        errors["sku"] = "Enter a SKU."
    elif len(sku) > 40:
        errors["sku"] = "SKU can be at most 40 characters."
    photo_error = _check_photos(form.photos)
    if photo_error:
        errors["photos"] = photo_error
    if errors or listing is None:
        return None, errors
    listing.sku, listing.photos = sku, form.photos
    return listing, {}


def validate_edit_form(form: ListingForm, *,
                       title_noun: str = "title") -> tuple[ValidListing | None, dict[str, str]]:
    """The fields a published listing's edit page changes (not its SKU or photos), or the errors."""
    errors: dict[str, str] = {}
    title = form.title.strip()
    if not title:
        errors["title"] = f"Enter a {title_noun}."
    elif len(title) > 80:
        errors["title"] = f"{title_noun.capitalize()} can be at most 80 characters."
    description = form.description.replace("\r\n", "\n").strip()  # browsers send textarea lines as CRLF
    if not description:
        errors["description"] = "Enter a description."
    elif len(description) > 2000:
        errors["description"] = "Description can be at most 2000 characters."
    price, price_error = _check_price(form.price)
    if price_error:
        errors["price"] = price_error
    category = dict(CATEGORIES).get(form.category)
    if category is None:
        errors["category"] = "Choose a category."
    condition = dict(CONDITIONS).get(form.condition)
    if condition is None:
        errors["condition"] = "Choose the item's condition."
    quantity, quantity_error = _check_quantity(form.quantity)
    if quantity_error:
        errors["quantity"] = quantity_error
    if errors:
        return None, errors
    assert price is not None and category is not None and condition is not None
    return ValidListing(title, description, price, category, condition, "", [], quantity), {}
