"""JUnit XML: one test case per row (and route), so CI shows each failing case by name."""
from __future__ import annotations

from dataclasses import dataclass, field
from xml.etree import ElementTree as ET

from ..atomic import AtomicOutput


@dataclass
class Case:
    suite: str      # the file
    name: str       # the row (and route)
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # warnings, shown as system-out


def write_junit(path: str, cases: list[Case], *, name: str) -> None:
    suites = ET.Element("testsuites", name=name, tests=str(len(cases)),
                        failures=str(sum(1 for c in cases if c.failures)))
    by_suite: dict[str, list[Case]] = {}
    for case in cases:
        by_suite.setdefault(case.suite, []).append(case)
    for suite_name, members in by_suite.items():
        suite = ET.SubElement(suites, "testsuite", name=suite_name, tests=str(len(members)),
                              failures=str(sum(1 for c in members if c.failures)), errors="0", skipped="0")
        for case in members:
            element = ET.SubElement(suite, "testcase", classname=suite_name, name=case.name)
            if case.failures:
                failure = ET.SubElement(element, "failure", message=_clean(case.failures[0]))
                failure.text = _clean("\n".join(case.failures))
            if case.notes:
                ET.SubElement(element, "system-out").text = _clean("\n".join(case.notes))
    ET.indent(suites)
    with AtomicOutput(path) as out:
        out.stream.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        out.stream.write(ET.tostring(suites, encoding="unicode") + "\n")
        out.commit()


def _clean(text: str) -> str:
    """XML 1.0 cannot hold most control characters; row text can."""
    return "".join(ch if ch in "\t\n\r" or ord(ch) >= 0x20 else f"\\x{ord(ch):02x}" for ch in text)
