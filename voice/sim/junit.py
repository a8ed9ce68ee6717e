"""`voice test --junit FILE`: the results as JUnit XML, the format CI systems show as test reports.

One ``testsuite`` per scenario, one ``testcase`` per expectation (a scenario that could not run is one
errored case); a failed expectation's line is its failure message.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from voice.errors import ConfigError
from voice.sim.suite import ScenarioResult


def junit_tree(results: list[ScenarioResult]) -> ET.ElementTree[ET.Element]:
    suites = ET.Element("testsuites", name="voice test")
    for result in results:
        name = str(result.path)
        suite = ET.SubElement(suites, "testsuite", name=name, time=f"{result.seconds:.3f}")
        if result.error is not None:
            case = ET.SubElement(suite, "testcase", classname=name, name="run")
            ET.SubElement(case, "error", message=result.error)
        elif not result.outcomes:
            ET.SubElement(suite, "testcase", classname=name, name="run")
        for outcome in result.outcomes:
            case = ET.SubElement(suite, "testcase", classname=name, name=outcome.expectation.label)
            if outcome.status == "fail":
                failure = ET.SubElement(case, "failure", message=outcome.line)
                if result.out is not None:
                    failure.text = f"the run is kept in {result.out}"
            elif outcome.status == "skip":
                ET.SubElement(case, "skipped", message=outcome.line)
            else:
                ET.SubElement(case, "system-out").text = outcome.line
        cases = suite.findall("testcase")
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(sum(case.find("failure") is not None for case in cases)))
        suite.set("errors", str(sum(case.find("error") is not None for case in cases)))
        suite.set("skipped", str(sum(case.find("skipped") is not None for case in cases)))
    return ET.ElementTree(suites)


def write_junit(results: list[ScenarioResult], path: Path) -> None:
    tree = junit_tree(results)
    ET.indent(tree)
    try:
        tree.write(path, encoding="utf-8", xml_declaration=True)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror}") from exc
