"""tau2-bench's retail tools as plain functions over the ``db.json`` data, for replaying its DB check.

Test support, not shipped. Written here from the behaviour of tau2's ``domains/retail/tools.py`` at
b02b509 (``RetailTools``, MIT licence; read in ../shared/data/tau2-bench-retail/tau2-src). Each tool is
``fn(db, **arguments)`` (arguments by name, as tau2's calls give them): ``db`` is the parsed ``db.json``
(``products``, ``users``, ``orders`` keyed by id), changed in place by the write tools, as
:func:`judgekit.integrations.tau2bench.load_run`'s replay expects. What tau2 does, these do:

* the same checks in the same order, raising :class:`ValueError` with tau2's own message when one fails
  (tau2's environment answers ``Error: <message>``), and leaving whatever changes a tool made before it
  raised (tau2 does not roll back either);
* the same values with the same types: prices, balances and amounts are floats (tau2's models declare
  them ``float``; every one in ``db.json`` is a JSON float), computed with the same operations in the same
  order, so rounding matches; tau2's quirks kept (``modify_pending_order_items`` gives every modified item
  the price and options of the *last* new item; ``exchange_delivered_order_items`` stores the rounded
  difference unvalidated, so no items give the integer ``0``);
* the same answers: an order, user or product as tau2's ``model_dump`` gives it (optional order fields
  present as ``None``), ids and ``calculate``'s result as text.
"""

from __future__ import annotations

import ast
import copy
import json
import operator
from collections.abc import Callable
from typing import Any

Db = dict[str, Any]

_ORDER_OPTIONAL = (
    "cancel_reason",
    "exchange_items",
    "exchange_new_items",
    "exchange_payment_method_id",
    "exchange_price_difference",
    "return_items",
    "return_payment_method_id",
)
"""Order fields with a ``None`` default in tau2's ``Order`` model (``db.json`` leaves them out)."""


# --------------------------------------------------------------------------- lookups (tau2's _get_*)


def _order(db: Db, order_id: str) -> dict[str, Any]:
    if order_id not in db["orders"]:
        raise ValueError("Order not found")
    order: dict[str, Any] = db["orders"][order_id]
    return order


def _user(db: Db, user_id: str) -> dict[str, Any]:
    if user_id not in db["users"]:
        raise ValueError("User not found")
    user: dict[str, Any] = db["users"][user_id]
    return user


def _product(db: Db, product_id: str) -> dict[str, Any]:
    if product_id not in db["products"]:
        raise ValueError("Product not found")
    product: dict[str, Any] = db["products"][product_id]
    return product


def _variant(db: Db, product_id: str, variant_id: str) -> dict[str, Any]:
    product = _product(db, product_id)
    if variant_id not in product["variants"]:
        raise ValueError("Variant not found")
    variant: dict[str, Any] = product["variants"][variant_id]
    return variant


def _payment_method(db: Db, user_id: str, payment_method_id: str) -> dict[str, Any]:
    user = _user(db, user_id)
    if payment_method_id not in user["payment_methods"]:
        raise ValueError("Payment method not found")
    method: dict[str, Any] = user["payment_methods"][payment_method_id]
    return method


def _is_gift_card(method: dict[str, Any]) -> bool:
    return bool(method.get("source") == "gift_card")


def _order_dump(order: dict[str, Any]) -> dict[str, Any]:
    """The order as tau2's ``Order.model_dump()`` answers it (optional fields as ``None``)."""
    dump = copy.deepcopy(order)
    for key in _ORDER_OPTIONAL:
        dump.setdefault(key, None)
    return dump


def _address(
    *, address1: str, address2: str, city: str, state: str, country: str, zip: str
) -> dict[str, str]:
    return {
        "address1": address1,
        "address2": address2,
        "city": city,
        "country": country,
        "state": state,
        "zip": zip,
    }


def _item_with_id(order: dict[str, Any], item_id: str) -> dict[str, Any] | None:
    return next((item for item in order["items"] if item["item_id"] == item_id), None)


def _check_items_exist(order: dict[str, Any], item_ids: list[str], message: Callable[[str], str]) -> None:
    """tau2's duplicate-aware check: each id at most as often as the order holds it."""
    held = [item["item_id"] for item in order["items"]]
    for item_id in item_ids:
        if item_ids.count(item_id) > held.count(item_id):
            raise ValueError(message(item_id))


# --------------------------------------------------------------------------- calculate

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def _evaluate(node: ast.AST) -> Any:
    """Python's arithmetic on an expression made of numbers, ``+ - * / // **`` and parentheses."""
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    raise TypeError(f"unsupported expression: {ast.dump(node)}")


def calculate(db: Db, expression: str) -> str:
    """The expression's value rounded to 2 places, as text (``"2 + 2"`` -> ``"4.0"``)."""
    if not all(char in "0123456789+-*/(). " for char in expression):
        raise ValueError("Invalid characters in expression")
    value = _evaluate(ast.parse(expression, filename="<string>", mode="eval"))
    return str(round(float(value), 2))


# --------------------------------------------------------------------------- read tools


def find_user_id_by_name_zip(db: Db, first_name: str, last_name: str, zip: str) -> str:
    """The first user (in ``db.json`` order) with that name (any case) and zip code."""
    for user_id, user in db["users"].items():
        if (
            user["name"]["first_name"].lower() == first_name.lower()
            and user["name"]["last_name"].lower() == last_name.lower()
            and user["address"]["zip"] == zip
        ):
            return str(user_id)
    raise ValueError("User not found")


def find_user_id_by_email(db: Db, email: str) -> str:
    """The first user whose email equals this one, ignoring case."""
    for user_id, user in db["users"].items():
        if user["email"].lower() == email.lower():
            return str(user_id)
    raise ValueError("User not found")


def get_order_details(db: Db, order_id: str) -> dict[str, Any]:
    """The order."""
    return _order_dump(_order(db, order_id))


def get_product_details(db: Db, product_id: str) -> dict[str, Any]:
    """The product with its variants."""
    return copy.deepcopy(_product(db, product_id))


def get_user_details(db: Db, user_id: str) -> dict[str, Any]:
    """The user with payment methods and order ids."""
    return copy.deepcopy(_user(db, user_id))


def list_all_product_types(db: Db) -> str:
    """JSON text: product name -> product id, keys sorted."""
    names = {product["name"]: product["product_id"] for product in db["products"].values()}
    return json.dumps(names, sort_keys=True)


def transfer_to_human_agents(db: Db, summary: str) -> str:
    """Changes nothing; tau2 answers ``Transfer successful``."""
    return "Transfer successful"


# --------------------------------------------------------------------------- write tools


def cancel_pending_order(db: Db, order_id: str, reason: str) -> dict[str, Any]:
    """Cancel a ``pending`` order: refund every payment (gift cards at once), status ``cancelled``."""
    order = _order(db, order_id)
    if order["status"] != "pending":
        raise ValueError("Non-pending order cannot be cancelled")
    if reason not in {"no longer needed", "ordered by mistake"}:
        raise ValueError("Invalid reason")
    refunds = []
    for payment in order["payment_history"]:
        payment_id = payment["payment_method_id"]
        refunds.append(
            {
                "transaction_type": "refund",
                "amount": float(payment["amount"]),
                "payment_method_id": payment_id,
            }
        )
        user = _user(db, order["user_id"])
        method = _payment_method(db, user["user_id"], payment_id)
        if _is_gift_card(method):
            method["balance"] += payment["amount"]
            method["balance"] = round(method["balance"], 2)
    order["status"] = "cancelled"
    order["cancel_reason"] = reason
    order["payment_history"].extend(refunds)
    return _order_dump(order)


def exchange_delivered_order_items(
    db: Db, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
) -> dict[str, Any]:
    """Request an exchange on a ``delivered`` order (status ``exchange requested``; no payment yet)."""
    order = _order(db, order_id)
    if order["status"] != "delivered":
        raise ValueError("Non-delivered order cannot be exchanged")
    _check_items_exist(order, item_ids, lambda item_id: f"Number of {item_id} not found.")
    if len(item_ids) != len(new_item_ids):
        raise ValueError("The number of items to be exchanged should match.")
    diff_price: float = 0
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=False):
        item = _item_with_id(order, item_id)
        if item is None:
            raise ValueError(f"Item {item_id} not found")
        variant = _variant(db, item["product_id"], new_item_id)
        if not variant["available"]:
            raise ValueError(f"New item {new_item_id} not found or available")
        diff_price += variant["price"] - item["price"]
    diff_price = round(diff_price, 2)
    method = _payment_method(db, order["user_id"], payment_method_id)
    if _is_gift_card(method) and method["balance"] < diff_price:
        raise ValueError("Insufficient gift card balance to pay for the price difference")
    order["status"] = "exchange requested"
    order["exchange_items"] = sorted(item_ids)
    order["exchange_new_items"] = sorted(new_item_ids)
    order["exchange_payment_method_id"] = payment_method_id
    order["exchange_price_difference"] = diff_price
    return _order_dump(order)


def modify_pending_order_address(
    db: Db, *, order_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
) -> dict[str, Any]:
    """Set the shipping address of an order whose status contains ``pending``."""
    order = _order(db, order_id)
    if "pending" not in order["status"]:
        raise ValueError("Non-pending order cannot be modified")
    order["address"] = _address(
        address1=address1, address2=address2, city=city, state=state, country=country, zip=zip
    )
    return _order_dump(order)


def modify_pending_order_items(
    db: Db, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
) -> dict[str, Any]:
    """Swap items of a ``pending`` order, paying or refunding the difference; ``pending (item modified)``."""
    order = _order(db, order_id)
    if order["status"] != "pending":
        raise ValueError("Non-pending order cannot be modified")
    _check_items_exist(order, item_ids, lambda item_id: f"{item_id} not found")
    if len(item_ids) != len(new_item_ids):
        raise ValueError("The number of items to be exchanged should match")
    diff_price: float = 0
    variant: dict[str, Any] | None = None
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=False):
        if item_id == new_item_id:
            raise ValueError("The new item id should be different from the old item id")
        item = _item_with_id(order, item_id)
        if item is None:
            raise ValueError(f"Item {item_id} not found")
        variant = _variant(db, item["product_id"], new_item_id)
        if not variant["available"]:
            raise ValueError(f"New item {new_item_id} not found or available")
        diff_price += variant["price"] - item["price"]
    method = _payment_method(db, order["user_id"], payment_method_id)
    if _is_gift_card(method) and method["balance"] < diff_price:
        raise ValueError("Insufficient gift card balance to pay for the new item")
    order["payment_history"].append(
        {
            "transaction_type": "payment" if diff_price > 0 else "refund",
            "amount": float(abs(diff_price)),
            "payment_method_id": payment_method_id,
        }
    )
    if _is_gift_card(method):
        method["balance"] -= diff_price
        method["balance"] = round(method["balance"], 2)
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=False):
        item = _item_with_id(order, item_id)
        if item is None:
            raise ValueError(f"Item {item_id} not found")
        # tau2 uses the variant left by the loop above (the last new item) for every item.
        if variant is None:  # pragma: no cover - an empty list never reaches the loop
            break
        item["item_id"] = new_item_id
        item["price"] = variant["price"]
        item["options"] = dict(variant["options"])
    order["status"] = "pending (item modified)"
    return _order_dump(order)


def modify_pending_order_payment(db: Db, order_id: str, payment_method_id: str) -> dict[str, Any]:
    """Move a pending order's single payment to another method (a payment and a refund are recorded)."""
    order = _order(db, order_id)
    if "pending" not in order["status"]:
        raise ValueError("Non-pending order cannot be modified")
    method = _payment_method(db, order["user_id"], payment_method_id)
    history = order["payment_history"]
    if len(history) != 1 or history[0]["transaction_type"] != "payment":
        raise ValueError("There should be exactly one payment for a pending order")
    if history[0]["payment_method_id"] == payment_method_id:
        raise ValueError("The new payment method should be different from the current one")
    amount = history[0]["amount"]
    if _is_gift_card(method) and method["balance"] < amount:
        raise ValueError("Insufficient gift card balance to pay for the order")
    history.extend(
        [
            {"transaction_type": "payment", "amount": float(amount), "payment_method_id": payment_method_id},
            {
                "transaction_type": "refund",
                "amount": float(amount),
                "payment_method_id": history[0]["payment_method_id"],
            },
        ]
    )
    if _is_gift_card(method):
        method["balance"] -= amount
        method["balance"] = round(method["balance"], 2)
    old = _payment_method(db, order["user_id"], history[0]["payment_method_id"])
    if _is_gift_card(old):
        old["balance"] += amount
        old["balance"] = round(old["balance"], 2)
    return _order_dump(order)


def modify_user_address(
    db: Db, *, user_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
) -> dict[str, Any]:
    """Set a user's default address."""
    user = _user(db, user_id)
    user["address"] = _address(
        address1=address1, address2=address2, city=city, state=state, country=country, zip=zip
    )
    return copy.deepcopy(user)


def return_delivered_order_items(
    db: Db, order_id: str, item_ids: list[str], payment_method_id: str
) -> dict[str, Any]:
    """Request a return on a ``delivered`` order, refunded to the original method or a gift card."""
    order = _order(db, order_id)
    if order["status"] != "delivered":
        raise ValueError("Non-delivered order cannot be returned")
    user = _user(db, order["user_id"])
    method = _payment_method(db, user["user_id"], payment_method_id)
    if not _is_gift_card(method) and payment_method_id != order["payment_history"][0]["payment_method_id"]:
        raise ValueError("Payment method should be the original payment method")
    _check_items_exist(order, item_ids, lambda _item_id: "Some item not found")
    order["status"] = "return requested"
    order["return_items"] = sorted(item_ids)
    order["return_payment_method_id"] = payment_method_id
    return _order_dump(order)


RETAIL_TOOLS: dict[str, Callable[..., Any]] = {
    fn.__name__: fn
    for fn in (
        calculate,
        cancel_pending_order,
        exchange_delivered_order_items,
        find_user_id_by_email,
        find_user_id_by_name_zip,
        get_order_details,
        get_product_details,
        get_user_details,
        list_all_product_types,
        modify_pending_order_address,
        modify_pending_order_items,
        modify_pending_order_payment,
        modify_user_address,
        return_delivered_order_items,
        transfer_to_human_agents,
    )
}
"""Every tool of tau2's ``RetailTools`` (the 15 ``@is_tool`` methods), by name."""
