"""The one naming rule (model/names.py): AMBF's space stripping, lookup by every accepted
spelling, ambiguity as an error listing the candidates. Expectations written by hand from AMBF's
rule (adf_loader_1_0.cpp removes ' ' from names) and the lookup order documented in NameIndex."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ambf_collision.model.names import (
    NameIndex,
    NameLookupError,
    ambf_name,
    normalize_namespace,
)


def test_ambf_name_removes_spaces_only():
    assert ambf_name("base link-suj ecm L0") == "baselink-sujecmL0"
    assert ambf_name("  a  b ") == "ab"
    assert ambf_name("tab\there") == "tab\there"  # AMBF removes ' ' only


@pytest.mark.parametrize("raw, ns", [("/ambf/env/", "/ambf/env/"), ("ambf/env", "/ambf/env/"),
                                     (" /psm1 ", "/psm1/"), ("", "/"), ("/", "/")])
def test_normalize_namespace(raw, ns):
    assert normalize_namespace(raw) == ns


@pytest.fixture
def suj():
    """Two robots: the SUJ (spaced names) and two copies of a PSM link in two namespaces."""
    return NameIndex(["/ambf/env/", "/ambf/env/", "/PSM1/", "/PSM2/", "/PSM1/"],
                     ["base link", "suj ecm L0", "tool yaw link", "tool yaw link", "base link 2"])


def test_canonical_names(suj):
    assert suj.qualified == ["/ambf/env/baselink", "/ambf/env/sujecmL0", "/PSM1/toolyawlink",
                             "/PSM2/toolyawlink", "/PSM1/baselink2"]
    assert suj.plain == ["baselink", "sujecmL0", "toolyawlink", "toolyawlink", "baselink2"]
    assert suj.original[1] == "suj ecm L0"
    assert suj.ambiguous_plain_names == ["toolyawlink"]


@pytest.mark.parametrize("name, index", [
    ("/ambf/env/sujecmL0", 1),      # 1. canonical qualified
    ("ambf/env/sujecmL0", 1),       # 1. without the leading slash
    ("sujecmL0", 1),                # 2. canonical plain, unique
    ("suj ecm L0", 1),              # 3. original spelling, plain
    ("/ambf/env/suj ecm L0", 1),    # 3. original spelling, qualified
    ("sujecm L0", 1),               # 4. other spacing: stripped
    ("/PSM2/tool yawlink", 3),      # 4. stripped, qualified
    ("PSM1/toolyawlink", 2),        # 5. namespace tail
    ("env/base link", 0),           # 5. tail of a spaced name
])
def test_lookup_steps(suj, name, index):
    assert suj.index(name) == index
    assert suj.get(name) == index and name in suj


@pytest.mark.parametrize("name", ["toolyawlink", "tool yaw link", "tool yawlink"])
def test_ambiguous_names_list_candidates(suj, name):
    with pytest.raises(NameLookupError) as ei:
        suj.index(name)
    assert ei.value.candidates == ("/PSM1/toolyawlink", "/PSM2/toolyawlink")
    msg = str(ei.value)
    assert "ambiguous" in msg and "/PSM1/toolyawlink" in msg and "/PSM2/toolyawlink" in msg
    assert isinstance(ei.value, KeyError) and name not in suj


def test_original_spelling_beats_stripped_collision():
    """'a b' (canonical 'ab') in /r1/ and 'ab' in /r2/: the spelling 'a b' is unambiguous."""
    idx = NameIndex(["/r1/", "/r2/"], ["a b", "ab"])
    assert idx.index("a b") == 0
    with pytest.raises(NameLookupError, match="ambiguous"):
        idx.index("ab")
    assert idx.index("/r2/ab") == 1


def test_unknown_name_message_suggests(suj):
    with pytest.raises(NameLookupError) as ei:
        suj.index("suj ecm L1")
    assert ei.value.candidates == ()
    msg = str(ei.value)
    assert msg.startswith("no body named 'suj ecm L1'") and "did you mean sujecmL0" in msg
    assert suj.get("nothing") is None and suj.get("nothing", -1) == -1 and suj.get(3) is None
    assert "" not in suj and "/" not in suj


def test_duplicate_canonical_names_refused():
    with pytest.raises(ValueError, match="duplicate joint name /r/ab"):
        NameIndex(["/r/", "r"], ["a b", "ab"], kind="joint")


def test_batch_indices(suj):
    idx, keep, unknown = suj.indices(["sujecmL0", "nope", "/PSM2/toolyawlink"])
    assert idx.dtype == np.int64 and keep.dtype == np.int64
    assert idx.tolist() == [1, 3] and keep.tolist() == [0, 2] and unknown == ["nope"]
    with pytest.raises(NameLookupError):
        suj.indices(["toolyawlink"])
    # or, asked so, an ambiguous name is unknown like one that designates nothing
    idx, keep, unknown = suj.indices(["toolyawlink", "sujecmL0", "nope"], ambiguous_unknown=True)
    assert idx.tolist() == [1] and keep.tolist() == [1] and unknown == ["toolyawlink", "nope"]


_word = st.text(alphabet="ab _-", min_size=1, max_size=6).filter(lambda s: s.replace(" ", ""))


@given(st.lists(st.tuples(st.sampled_from(["/x/", "/y/"]), _word), min_size=1, max_size=6,
                unique_by=lambda t: t[0] + t[1].replace(" ", "")))
def test_every_entry_found_by_qualified_and_original(entries):
    """Property: each entry is found by its canonical qualified name and by its qualified name
    as written; a plain spelling either finds it or reports it ambiguous among entries that
    share the spelling, never another single entry."""
    idx = NameIndex([e[0] for e in entries], [e[1] for e in entries])
    for i, (ns, name) in enumerate(entries):
        assert idx.index(ns + name.replace(" ", "")) == i
        assert idx.index(ns + name) == i
        try:
            assert idx.index(name) == i
        except NameLookupError as e:
            assert idx.qualified[i] in e.candidates and len(e.candidates) > 1
