"""Where GKE offers each accelerator: the zones a public source lists, one row per
accelerator (catalog key) or machine type, each with its source, the date it was read and
which continent sections of it were read in full. TPU rows are Google's regions-and-zones
pages; GPU rows SkyPilot's GCP catalog (`gpu_zones`), as Google's GPU page could not be read.
A zone is refused only where its continent's section was read and does not list it;
elsewhere the table does not know, and says so (`gkeml_sdk.where_offered`).

Rows whose source lists no zones carry a note saying so; add a row (or zones) keyed by
accelerator key or machine type when a source is read.
"""

from __future__ import annotations

from dataclasses import dataclass

from gkeml_sdk.core.model import fail
from gkeml_sdk.hardware import gpu_zones, gpus

TPU_PAGE = "https://docs.cloud.google.com/tpu/docs/types-zones"
TPU_PAGE_OLDER = "https://cloud.google.com/tpu/docs/regions-zones"
TPU_PAGE_MARKDOWN = "https://docs.cloud.google.com/tpu/docs/regions-zones.md.txt"
TPU_PAGE_GERMAN = "https://cloud-dot-devsite-v2-prod.appspot.com/tpu/docs/types-zones?hl=de"
GPU_PAGE = "https://cloud.google.com/compute/docs/gpus/gpu-regions-zones"
READ_ON = "2026-12-07"

# The page's continent sections, by the first word of a zone's name.
SECTIONS = {
    "us": "North America",
    "northamerica": "North America",
    "southamerica": "South America",
    "europe": "Europe",
    "me": "Middle East",
    "africa": "Africa",
    "asia": "Asia Pacific",
    "australia": "Asia Pacific",
}


@dataclass(frozen=True, slots=True)
class Availability:
    """The zones one source lists for an accelerator (catalog key) or machine type.

    `sections` are the continent sections read in full; `zones` lists every zone they name;
    `lister` says who lists them, in the words an error uses.

    Example:
        >>> row = availability("v5e")
        >>> row.zones_in("us-west1"), row.knows("europe-west4-b")
        (('us-west1-c',), False)
    """

    key: str
    zones: tuple[str, ...]
    sections: tuple[str, ...]
    source: str
    read_on: str
    note: str = ""
    # What a version of the source says of one zone (single-tenant, found only in another).
    zone_notes: tuple[tuple[str, str], ...] = ()
    lister: str = "Google's page"

    def knows(self, zone: str) -> bool:
        """True when the source's section for `zone`'s continent was read in full."""
        return section_of(zone) in self.sections

    def offers(self, zone: str) -> bool | None:
        """Whether the source lists `zone`; None where its section was not read."""
        return zone in self.zones if self.knows(zone) else None

    def zones_in(self, region: str) -> tuple[str, ...]:
        """The listed zones of `region`."""
        return tuple(z for z in self.zones if region_of(z) == region)

    def listed(self) -> list[tuple[str, str, str, str]]:
        """(zone, region, continent section, what the page says of it) of each listed zone,
        in the page's order."""
        said = dict(self.zone_notes)
        return [(z, region_of(z), section_of(z), said.get(z, "")) for z in self.zones]


def _tpu(
    key: str,
    zones: tuple[str, ...],
    sections: tuple[str, ...],
    note: str,
    zone_notes: tuple[tuple[str, str], ...] = (),
) -> Availability:
    return Availability(key, zones, sections, TPU_PAGE, READ_ON, note, zone_notes)


# The German version of the page lists more North American zones as single-tenant: kept,
# so that no zone one version of Google's page lists is refused.
_SINGLE_TENANT = f"single-tenant ({TPU_PAGE_GERMAN})"


_NORTH_AMERICA_ONLY = (
    "the page's North America section as stored on the date read; its other sections were "
    "not readable there, so zones elsewhere are unknown here"
)
# Rows as the pages say them; zone names are copied, never derived. Each row's zones are
# those every stored version of the page lists for it (the union), so a zone is refused only
# where no version lists it.
TABLE: tuple[Availability, ...] = (
    _tpu(
        "tpu7x",
        ("us-central1-ai1a", "us-central1-c"),
        ("North America",),
        _NORTH_AMERICA_ONLY,
        (("us-central1-ai1a", f"AI zone, listed in {TPU_PAGE_MARKDOWN}"),),
    ),
    _tpu(
        "v6e",
        (
            "us-central1-ai1",
            "us-central1-b",
            "us-east1-d",
            "us-east5-a",
            "us-east5-b",
            "us-south1-ai1b",
            "us-east5-c",
            "us-east4-a",
            "us-east4-b",
            "us-west1-c",
            "europe-west4-a",
        ),
        ("North America", "Europe"),
        f"North America from {TPU_PAGE} and its German version; Europe from {TPU_PAGE_OLDER} "
        "(an older version of the same page); Asia Pacific not readable on the date read",
        (
            ("us-east5-c", _SINGLE_TENANT),
            ("us-east4-a", _SINGLE_TENANT),
            ("us-east4-b", _SINGLE_TENANT),
            ("us-west1-c", f"single-tenant, except Spot quota ({TPU_PAGE_GERMAN})"),
        ),
    ),
    _tpu(
        "v5p",
        ("us-central1-a", "us-east5-a", "us-east5-b", "us-east5-c", "us-south1-a"),
        ("North America",),
        _NORTH_AMERICA_ONLY,
        tuple((z, _SINGLE_TENANT) for z in ("us-east5-b", "us-east5-c", "us-south1-a")),
    ),
    _tpu(
        "v5e",
        (
            "us-central1-a",
            "us-south1-a",
            "us-west1-c",
            "us-west4-a",
            "us-east5-a",
            "us-east5-b",
            "us-east5-c",
        ),
        ("North America",),
        _NORTH_AMERICA_ONLY,
        tuple((z, _SINGLE_TENANT) for z in ("us-east5-a", "us-east5-b", "us-east5-c")),
    ),
    _tpu("v4", ("us-central2-b",), ("North America",), _NORTH_AMERICA_ONLY),
    # The catalog covers every region, so every continent section counts as read.
    *(
        Availability(
            key,
            zones,
            tuple(dict.fromkeys(SECTIONS.values())),
            gpu_zones.SOURCE,
            READ_ON,
            f"every region of the file; Google's GPU page ({GPU_PAGE}) could not be read",
            notes,
            gpu_zones.LISTER,
        )
        for key, (zones, notes) in gpu_zones.GPU_ZONES.items()
    ),
)
_GPU_NOT_FOUND = (
    "neither Google's GPU regions-and-zones page (an interactive table) nor SkyPilot's GCP "
    f"catalog at {gpu_zones.COMMIT[:7]} lists zones for this GPU: none are recorded, none "
    "refused"
)
_BY_KEY = {row.key: row for row in TABLE}


def availability(*keys: str) -> Availability:
    """The first row keyed by one of `keys` (a machine type, then an accelerator key such as
    `h100` or `v5e`); else a row without zones saying why: for a catalog GPU, that no source
    read lists it.

    Example:
        >>> availability("h200").zones_in("us-central1"), availability("gb200").zones
        (('us-central1-b',), ())
        >>> availability("ct4p-hightpu-4t", "v4").zones
        ('us-central2-b',)
        >>> availability("h4d-highmem-192").note
        'no regions-and-zones page was read for h4d-highmem-192: no zones are recorded'
    """
    for key in keys:
        found = _BY_KEY.get(key)
        if found is not None:
            return found
    key = keys[-1]
    if key in gpus.gpu_names():
        return Availability(
            key, (), (), gpu_zones.SOURCE, READ_ON, _GPU_NOT_FOUND, lister=gpu_zones.LISTER
        )
    note = f"no regions-and-zones page was read for {key}: no zones are recorded"
    return Availability(key, (), (), "", "", note)


def region_of(zone: str) -> str:
    """The region of a zone name (`us-central1-ai1a` -> `us-central1`)."""
    return zone.rsplit("-", 1)[0]


def region_named(location: str) -> str:
    """The region a GKE location names: itself, or a zone's region.

    Example:
        >>> region_named("us-central1"), region_named("us-central1-ai1a")
        ('us-central1', 'us-central1')
    """
    # Region names have one dash (us-central1, northamerica-northeast1); zones add one.
    return region_of(location) if location.count("-") > 1 else location


def section_of(zone: str) -> str:
    """The continent section a zone or region is listed under on Google's pages."""
    return SECTIONS.get(zone.split("-", 1)[0], "other")


def nearest_zones(row: Availability, zone: str, limit: int = 4) -> list[str]:
    """The listed zones nearest `zone`: its region's first, then its area's (the region
    name without its number: `asia-south`), then its continent prefix's (`us`, `europe`,
    ...), then the rest, each in the source's order.

    Example:
        >>> nearest_zones(availability("v5e"), "us-central1-f")
        ['us-central1-a', 'us-south1-a', 'us-west1-c', 'us-west4-a']
        >>> nearest_zones(availability("l4"), "asia-south2-a", limit=2)
        ['asia-south1-a', 'asia-south1-b']
    """
    prefix = zone.split("-", 1)[0]

    def area(name: str) -> str:
        return region_of(name).rstrip("0123456789")

    def rank(candidate: str) -> int:
        if region_of(candidate) == region_of(zone):
            return 0
        if area(candidate) == area(zone):
            return 1
        return 2 if candidate.split("-", 1)[0] == prefix else 3

    return sorted(row.zones, key=rank)[:limit]


def check_zones(
    keys: tuple[str, ...], display: str, zones: tuple[str, ...], field: str = "zones"
) -> None:
    """Raise `SpecError` for a zone whose continent the table read and that the row of
    `keys` (`availability`) does not list, naming the nearest zones that do.

    Example:
        >>> check_zones(("v5e",), "TPU v5e", ("us-east1-b",))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: TPU v5e in zone 'us-east1-b'...
    """
    row = availability(*keys)
    for zone in zones:
        if row.offers(zone) is False:
            section = section_of(zone)
            listed = [z for z in row.zones if section_of(z) == section]
            where = f"only in {', '.join(listed)}" if listed else "in no zone"
            nearest = nearest_zones(row, zone)
            raise fail(
                f"{display} in zone {zone!r}",
                rule=f"{row.lister} lists {display} in {section} {where} ({row.source}, "
                f"read {row.read_on})",
                fix=f"{field}=[{nearest[0]!r}] (nearest listed: {', '.join(nearest)})",
                field=field,
            )


def check_region(keys: tuple[str, ...], display: str, region: str, field: str = "region") -> None:
    """Raise `SpecError` for a region (or a zone's region) whose continent the table read
    and that has no listed zone in the row of `keys` (`availability`), naming regions that
    have one.

    Example:
        >>> check_region(("v5p",), "TPU v5p", "us-central1")
        >>> check_region(("v5p",), "TPU v5p", "us-west1")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        gkeml_sdk.errors.SpecError: TPU v5p in region 'us-west1'...
    """
    row = availability(*keys)
    region = region_named(region)
    if not row.knows(region) or row.zones_in(region):
        return
    nearest = nearest_zones(row, f"{region}-a")
    listed = [z for z in row.zones if section_of(z) == section_of(region)]
    where = f"only in {', '.join(listed)}" if listed else "in no zone"
    raise fail(
        f"{display} in region {region!r}",
        rule=f"{row.lister} lists {display} in {section_of(region)} {where} "
        f"({row.source}, read {row.read_on})",
        fix=f"a region with it: {', '.join(dict.fromkeys(region_of(z) for z in nearest))}",
        field=field,
    )
