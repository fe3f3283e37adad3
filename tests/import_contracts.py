"""An import-linter contract type of ours: a package that may import only the standard library.

import-linter's `forbidden` contract needs every forbidden package named, so a dependency added
tomorrow would slip through it; this one allows instead of forbids: the library (`pmem`) may
import itself and `sys.stdlib_module_names`, nothing else. Used by `.importlinter`.
"""

from __future__ import annotations

import sys

from importlinter import Contract, ContractCheck, fields, output


class StandardLibraryOnly(Contract):
    """`source_modules` (and their descendants) import only themselves and the standard library."""

    type_name = "standard library only"
    source_modules = fields.ListField(subfield=fields.ModuleField())

    def check(self, graph, verbose: bool) -> ContractCheck:  # type: ignore[no-untyped-def]
        sources = [m.name for m in self.source_modules]  # type: ignore[attr-defined]
        allowed = {s.split(".")[0] for s in sources} | set(sys.stdlib_module_names)
        found = []
        for source in sources:
            for module in sorted({source} | graph.find_descendants(source)):
                for imported in sorted(graph.find_modules_directly_imported_by(module)):
                    if imported.split(".")[0] not in allowed:
                        details = graph.get_import_details(importer=module, imported=imported)
                        lines = ", ".join(str(d["line_number"]) for d in details) or "?"
                        found.append((module, imported, lines))
        return ContractCheck(kept=not found, metadata={"found": found})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for module, imported, lines in check.metadata["found"]:
            output.print_error(
                f"{module} imports {imported} (line {lines}): not the standard library"
            )
        output.new_line()
