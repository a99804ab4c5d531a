"""Authors cited in a paper are people, whatever the rules made of their surname alone."""

from __future__ import annotations

import pytest

from graph.extraction.citations import cited_authors
from graph.models import Entity
from graph.services import graph_extract_memories
from tests.factories import make_memory

# Lines of a real review of the technology acceptance model (tam-review in bench_organise --real).
PAPER = (
    "In both groups, Venkatesh (2000) proposed several determinants. Davis, Bagozzi and Warshaw\n"
    "(1989) suggested it. (Davis, Bagozzi and Warshaw, 1992, Venkatesh and Davis, 1996). Figure 6: "
    "Final version of TAM (Venkatesh & Davis, 1996, p. 453). Legris et al. found the same.\n\n"
    "References\n"
    "Bagozzi, R. P. (2007). The legacy of the technology acceptance model.\n"
    "Davis, F., Bagozzi, R.P., & Warshaw, P.R. (1989). User acceptance of computer technology.\n"
)


def test_the_surnames_a_paper_cites_are_authors():
    assert cited_authors(PAPER) == {"Venkatesh", "Davis", "Bagozzi", "Warshaw", "Legris"}


@pytest.mark.parametrize(
    "text",
    [
        "Microsoft Office (2007) crashed again.",  # a product's version, written once
        "In January (2001) and in January (2003) we moved.",  # a month is never an author
        "The WHO (2020) and the WHO (2021) said so.",  # an acronym cites an organisation
        "Windows 2000 and Windows 2003 servers.",
        "Paris, France. Lyon, France.",
        # One citation read twice where a document's chunks overlap, as graph extraction joins them.
        "The build used Microsoft Office (2007) throughout.\nMicrosoft Office (2007) throughout. Then",
    ],
)
def test_years_and_commas_beside_other_names_cite_no_one(text):
    assert cited_authors(text) == frozenset()


@pytest.mark.django_db
def test_a_surname_the_paper_cites_in_its_references_is_a_person_in_every_chunk(user):
    """A walk-through found Venkatesh and Bagozzi typed concept in a real paper: their body mentions
    ("Bagozzi also questioned", "Finally, Bagozzi remarked") say nothing of them, while the paper's
    reference list, in another chunk, cites them."""
    body = " ".join(
        f"Finally, Bagozzi remarked in section {i} that TAM was a deterministic model of behaviour." for i in range(30)
    )
    memory = make_memory(user, f"{body}\n\n{PAPER}")
    assert memory.chunks.count() >= 3
    graph_extract_memories(memory_ids=[memory.pk])
    types = dict(Entity.objects.filter(owner=user).values_list("name", "type"))
    assert types.get("Bagozzi") == "person"
    assert types.get("Venkatesh") == "person"
