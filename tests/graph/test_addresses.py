"""Towns on postal address lines are places, in any language and address style."""

from __future__ import annotations

import pytest

from graph.extraction import extract_texts
from graph.extraction.addresses import address_towns


@pytest.mark.parametrize(
    ("line", "town"),
    [
        ("QualityHosting AG - Uferweg 40-42 - D-63571 Gelnhausen", "Gelnhausen"),  # German, after a dash
        ("75008 Paris", "Paris"),
        ("1012 AB Amsterdam", "Amsterdam"),  # a Dutch postcode's letters
        ("CH-8001 Zürich", "Zürich"),
        ("10115 Berlin, Deutschland", "Berlin"),
        ("Seattle, WA 98109-5210", "Seattle"),  # a state's code and a ZIP code
        ("Yuen Long, N.T., 0000, HK", "Yuen Long"),  # parts with a postcode, then a country's code
        ("Nanganallur, Chennai - 600061", "Chennai"),  # a six-digit PIN
        ("New Delhi - 110001", "New Delhi"),  # "new" opens currencies' names too, never ends one
        ("Southern Peripheral Road, Sec-69, Gurgaon -122001 | Phone: 080 100", "Gurgaon"),
        ("Saint-Étienne 42000", None),  # a town before five digits is no address form known here
    ],
)
def test_the_town_of_an_address_line(line, town):
    found = [t.name for t in address_towns(f"Invoice\n{line}\nTotal")]
    assert found == ([town] if town else [])


@pytest.mark.parametrize(
    "line",
    [
        "2019 Toyota Camry",  # four digits alone: a year
        "50000 Euro",  # an amount
        "12000 Dollars",
        "12000 US Dollars",
        "10023 BMS",  # an acronym after a number
        "Tel. +49 6051 916 44 10",
        "6 1 Small Business QualityExchange 2010 5,39 5,39",
        "Registergericht Hanau | HRB 13302",
    ],
)
def test_numbers_beside_words_that_are_no_address(line):
    assert address_towns(f"Invoice\n{line}\nTotal") == []


def test_a_bank_statements_references_and_descriptions_are_no_addresses():
    statement = "\n".join(
        [
            "Account statement",
            "20231 Direct Debit",
            "20232 Transfer",
            "20233 Payment Received",
            "20234 Withdrawal",
            "20235 Card Payment",
            "20236 Standing Order",
            "Closing balance 1,204.11",
        ]
    )
    assert address_towns(statement) == []


def test_an_address_town_is_a_place_in_the_graph_and_replaces_a_name_read_across_lines():
    english, german = extract_texts(
        [
            "Bill to Address:\nATTN: iViveLabs Limited\n93B Sai Yu Chung\nYuen Long, N.T., 0000, HK\n"
            "Amazon Web Services, Inc.\n410 Terry Ave North\nSeattle, WA 98109-5210, US",
            "QualityHosting AG - Uferweg 40-42 - D-63571 Gelnhausen\nRechnung\nD-63571 Gelnhausen",
        ]
    )
    places = {m.name for m in english.mentions if m.type == "location"}
    assert {"Yuen Long", "Seattle"} <= places
    german_names = {(m.name, m.type, m.key) for m in german.mentions}
    assert ("Gelnhausen", "location", "gelnhausen") in german_names
    assert not any("Gelnhausen" in name and kind != "location" for name, kind, _ in german_names)
