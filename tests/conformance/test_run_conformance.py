#!/usr/bin/env python3
"""Tests of run_conformance.py's case splitting: each CHECK-LABEL section is checked by real
FileCheck the way a whole-file run checks it (labels matched in order, each searching forward
from the previous label's match). Exits 77 (skipped) when FileCheck is absent."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_conformance as rc  # noqa: E402

FILECHECK = os.environ.get("FILECHECK", "/usr/lib/llvm-14/bin/FileCheck")

# @foo_bar comes first in the file and in the output: `CHECK-LABEL: func @foo` also matches
# `func @foo_bar`, so only a search that starts after the previous label's match finds @foo.
CHECKS = """// CHECK: sdy.mesh @mesh
// CHECK-LABEL: func @foo_bar
// CHECK-NEXT: stablehlo.add
// CHECK-LABEL: func @foo
// CHECK-NEXT: stablehlo.multiply
// CHECK-LABEL: func @baz
// CHECK-NEXT: stablehlo.negate
"""

OUTPUT = b"""sdy.mesh @mesh = <["x"=2]>
func.func @foo_bar(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<8xf32>
func.func @foo(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.multiply %arg0, %arg0 : tensor<8xf32>
func.func @baz(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8xf32>
"""


class LabelSections(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.sections = rc.label_sections(CHECKS, ["CHECK"])

    def tearDown(self):
        self.tmp.cleanup()

    def check(self, i, output):
        name, preamble, earlier, lines = self.sections[i]
        path = os.path.join(self.tmp.name, "%d.check" % i)
        return rc.check_section(FILECHECK, [], path, preamble, earlier, lines, output)[0]

    def test_each_section_carries_the_earlier_labels_and_the_next_label(self):
        self.assertEqual([s[0] for s in self.sections], ["foo_bar", "foo", "baz"])
        name, preamble, earlier, lines = self.sections[1]
        self.assertEqual(preamble, ["// CHECK: sdy.mesh @mesh"])
        self.assertEqual(earlier, ["// CHECK-LABEL: func @foo_bar"])
        self.assertEqual(lines, ["// CHECK-LABEL: func @foo", "// CHECK-NEXT: stablehlo.multiply",
                                 "// CHECK-LABEL: func @baz"])

    def test_a_label_that_prefixes_an_earlier_function_is_found_after_it(self):
        for i in range(3):
            self.assertTrue(self.check(i, OUTPUT), self.sections[i][0])

    def test_a_wrong_body_still_fails_its_own_section_only(self):
        wrong = OUTPUT.replace(b"stablehlo.multiply", b"stablehlo.subtract")
        self.assertTrue(self.check(0, wrong))
        self.assertFalse(self.check(1, wrong))
        self.assertTrue(self.check(2, wrong))

    def test_an_earlier_label_missing_from_the_output_fails_only_its_own_section(self):
        missing = OUTPUT.replace(b"@foo_bar", b"@other")
        self.assertFalse(self.check(0, missing))
        self.assertTrue(self.check(1, missing))
        self.assertTrue(self.check(2, missing))

    def test_the_preamble_must_match_before_the_first_label(self):
        late = OUTPUT.replace(b"sdy.mesh @mesh = <[\"x\"=2]>\n", b"") + b"sdy.mesh @mesh\n"
        self.assertFalse(self.check(1, late))


if __name__ == "__main__":
    if not os.access(FILECHECK, os.X_OK):
        print("SKIP: FileCheck not found at %s (install llvm-14-tools)" % FILECHECK)
        sys.exit(77)
    unittest.main()
