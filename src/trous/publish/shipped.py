"""The course's own files that its own notebook (course.yaml's `explorer:`) imports: a widget's
module, say. They belong to the course, not to trous; the student edition and the nbgrader release
carry them beside the notebook (`explorer.files`)."""

from __future__ import annotations

from ..core.course import Course


class ShippedError(ValueError):
    """French: a file `explorer.files` names is not there (or too many)."""

MAX_SHIPPED = 2000  # files of a course's own notebook shipped with it (a widget's module is a handful)


def explorer_files(course: Course) -> dict[str, bytes]:
    """The course's files its own notebook imports (`explorer.files`: files or folders, relative to the
    course's root), by path relative to that root: what the edition and the nbgrader release carry
    beside the notebook. Links are not followed, caches are left out; a path that is not there stops
    with a French error."""
    found: dict[str, bytes] = {}
    if course.explorer is None:
        return found
    root = course.root.resolve()
    for name in course.explorer.files:
        path = root / name
        if path.is_symlink() or not path.exists() or root not in path.resolve().parents:
            raise ShippedError(f"course.yaml, explorer.files : « {name} » introuvable dans {root} (un chemin "
                               "depuis la racine du cours, vers un fichier ou un dossier qui y est)")
        paths = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for item in paths:
            if item.is_symlink() or "__pycache__" in item.parts or item.suffix in (".pyc", ".pyo"):
                continue
            found[item.relative_to(root).as_posix()] = item.read_bytes()
            if len(found) > MAX_SHIPPED:
                raise ShippedError(f"course.yaml, explorer.files : plus de {MAX_SHIPPED} fichiers à donner")
    return found
