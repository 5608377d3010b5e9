"""Two experts' label tables compared: the items they disagree on, with each one's label and notes.

Two experts label the same items independently (each on their own labelling page,
:mod:`judgekit.golden.label_page`); :func:`compare_label_tables` lists every item where their labels differ
(``insufficient_information`` against ``pass`` is a disagreement too), the items they agree on, and the
items only one of them labelled. Like ``cases reconcile``, disagreements are findings to settle (a
criterion worded ambiguously, a policy that lives in someone's head), not noise to average away:

* :func:`agreed_csv` is the label table of both experts' rows, written only when nothing is left to
  settle (every item labelled by both, every label equal): calibrating on the agreed items alone while
  disputes remain would leave out exactly the hard items and overstate the judge's agreement;
* :func:`resolution_csv` is the resolution sheet: one row per disputed or one-sided item with both labels
  and notes, for the experts to settle (each then corrects their own page, downloads again, and the two
  tables are compared again).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

from judgekit.calibration.labels import ItemKey, LabelRow, LabelTable
from judgekit.errors import JudgekitError
from judgekit.verdict import FrozenModel

__all__ = [
    "ItemComparison",
    "LabelReconciliation",
    "agreed_csv",
    "compare_label_tables",
    "resolution_csv",
    "single_rater",
]


class ItemComparison(FrozenModel):
    """One item as the two experts labelled it.

    Attributes:
        item_id: The trial's item id (``<case id>#<trial>``).
        criterion: The criterion id (``""`` when the tables have none).
        case_id: The item's case.
        a_label: Expert A's label, ``None`` when A did not label it.
        b_label: Expert B's label, ``None`` when B did not label it.
        a_notes: Expert A's notes (``""`` when none).
        b_notes: Expert B's notes (``""`` when none).
    """

    item_id: str
    criterion: str
    case_id: str
    a_label: str | None
    b_label: str | None
    a_notes: str = ""
    b_notes: str = ""


@dataclass
class LabelReconciliation:
    """Two experts' label tables compared.

    Attributes:
        experts: Expert A's and expert B's rater names.
        agreed: Items both labelled alike, in item order.
        disputed: Items both labelled differently, in item order.
        only_a: Items only expert A labelled.
        only_b: Items only expert B labelled.
        saw_judge: Per expert, how many of their labels were given seeing the judge's verdict.
    """

    experts: tuple[str, str]
    agreed: list[ItemComparison] = field(default_factory=list)
    disputed: list[ItemComparison] = field(default_factory=list)
    only_a: list[ItemComparison] = field(default_factory=list)
    only_b: list[ItemComparison] = field(default_factory=list)
    saw_judge: dict[str, int] = field(default_factory=dict)

    @property
    def settled(self) -> bool:
        """True when nothing is disputed and every item was labelled by both experts."""
        return not (self.disputed or self.only_a or self.only_b)

    def unsettled(self) -> list[ItemComparison]:
        """The disputed items, then those only one expert labelled."""
        return self.disputed + self.only_a + self.only_b


def single_rater(table: LabelTable) -> str:
    """The one rater of an expert's downloaded table.

    Raises:
        JudgekitError: (exit 2) When the table holds several raters' labels.
    """
    raters = table.raters
    if len(raters) != 1:
        raise JudgekitError(
            f"{table.source}: holds the labels of {len(raters)} raters ({', '.join(raters)}); compare two "
            "experts' own tables, one rater each (as the labelling page downloads them)"
        )
    return raters[0]


def _view(item: ItemKey, a: LabelRow | None, b: LabelRow | None) -> ItemComparison:
    row = a if a is not None else b
    case_id = row.case_id if row is not None else item.item_id
    return ItemComparison(
        item_id=item.item_id,
        criterion=item.criterion,
        case_id=case_id,
        a_label=a.label if a is not None else None,
        b_label=b.label if b is not None else None,
        a_notes=(a.notes or "") if a is not None else "",
        b_notes=(b.notes or "") if b is not None else "",
    )


def compare_label_tables(a: LabelTable, b: LabelTable) -> LabelReconciliation:
    """Compare two experts' tables item by item.

    Args:
        a: Expert A's table (one rater).
        b: Expert B's table (one rater, another name).

    Returns:
        The agreed, disputed and one-sided items, each list sorted by (item id, criterion).

    Raises:
        JudgekitError: (exit 2) A table with several raters, or both tables by the same rater.
    """
    name_a, name_b = single_rater(a), single_rater(b)
    if name_a == name_b:
        raise JudgekitError(
            f"{a.source} and {b.source} are both labelled by {name_a!r}; compare two different experts' "
            "tables"
        )
    out = LabelReconciliation(experts=(name_a, name_b))
    for name, table in ((name_a, a), (name_b, b)):
        out.saw_judge[name] = sum(1 for r in table.rows if r.saw_judge)
    for item in sorted(set(a.items) | set(b.items)):
        ra, rb = a.row(item, name_a), b.row(item, name_b)
        view = _view(item, ra, rb)
        if ra is None:
            out.only_b.append(view)
        elif rb is None:
            out.only_a.append(view)
        elif ra.label == rb.label:
            out.agreed.append(view)
        else:
            out.disputed.append(view)
    return out


def _csv(rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerows(rows)
    return buffer.getvalue()


def agreed_csv(result: LabelReconciliation, a: LabelTable, b: LabelTable) -> str:
    """Both experts' rows as one label table (item_id, criterion, rater, label, case_id, notes, saw_judge).

    Raises:
        JudgekitError: (exit 1) When items are disputed or labelled by one expert only: nothing is written.
    """
    if not result.settled:
        raise JudgekitError(
            f"{len(result.disputed)} disputed item(s) and {len(result.only_a) + len(result.only_b)} "
            "labelled by one expert only are not settled; the agreed table was not written",
            exit_code=1,  # the comparison ran and found disagreements, as `labels reconcile` exits
        )
    rows = [["item_id", "criterion", "rater", "label", "case_id", "notes", "saw_judge"]]
    for table in (a, b):
        for r in table.rows:
            saw = "" if r.saw_judge is None else ("yes" if r.saw_judge else "no")
            rows.append([r.item.item_id, r.item.criterion, r.rater, r.label, r.case_id, r.notes or "", saw])
    return _csv(rows)


def resolution_csv(result: LabelReconciliation) -> str:
    """The resolution sheet: every unsettled item with both experts' labels and notes (CSV).

    Columns ``item_id, criterion, case_id``, then per expert ``<name> label`` and ``<name> notes`` (an
    empty label: that expert did not label the item), then ``resolution`` and ``resolution notes``, left
    empty for the experts to fill in.
    """
    name_a, name_b = result.experts
    rows = [
        [
            "item_id",
            "criterion",
            "case_id",
            f"{name_a} label",
            f"{name_a} notes",
            f"{name_b} label",
            f"{name_b} notes",
            "resolution",
            "resolution notes",
        ]
    ]
    for c in result.unsettled():
        rows.append(
            [
                c.item_id,
                c.criterion,
                c.case_id,
                c.a_label or "",
                c.a_notes,
                c.b_label or "",
                c.b_notes,
                "",
                "",
            ]
        )
    return _csv(rows)
