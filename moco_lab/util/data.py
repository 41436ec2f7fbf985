"""Files the project ships: model files from opensim-core (Apache-2.0; ``moco_lab/data/opensim/NOTICE.md``) and
the gait2d parameter table (``moco_lab/data/gait2d/NOTICE.md``)."""
from __future__ import annotations

from pathlib import Path

from .names import did_you_mean

__all__ = ["OPENSIM_DIR", "GAIT2D_DIR", "GAIT2D_PARAMETERS", "WINTER_GAIT", "GAIT2D_PREDICTED_WALK",
           "GAIT2D_TRACKED_WALK", "WALKING_2D_DIR", "WALKING_2D_PREDICTED", "WALKING_3D_DIR", "WALKING_3D_KNEE_LOAD",
           "opensim_file", "opensim_files"]

#: Where the shipped OpenSim model and data files are.
OPENSIM_DIR = Path(__file__).resolve().parents[1] / "data" / "opensim"
#: The gait2d files: parameters, Winter's gait, predicted cycles (``moco_lab/data/gait2d/NOTICE.md``).
GAIT2D_DIR = Path(__file__).resolve().parents[1] / "data" / "gait2d"
#: The gait2d model's parameter table (TOML, each value with its source).
GAIT2D_PARAMETERS = GAIT2D_DIR / "gait2d_parameters.toml"
#: Winter's normal gait (angles and ground reaction forces, mean and variance over a cycle), as plain text.
WINTER_GAIT = GAIT2D_DIR / "winter_normal_gait.csv"
#: Predicted gait cycles (minimum effort, Winter's speed) by mesh intervals: warm starts made by
#: ``benchmarks/gait2d_warm_starts.py`` (provenance in ``predicted_walk.md`` next to them).
GAIT2D_PREDICTED_WALK = {n: GAIT2D_DIR / f"predicted_walk_N{n}.sto" for n in (25, 50)}
#: gait2d tracking Winter's normal gait (N = 50, same script): the synthetic subject's motion
#: (:mod:`moco_lab.examples.synthetic`).
GAIT2D_TRACKED_WALK = GAIT2D_DIR / "tracked_walk_N50.sto"
#: Solutions of Moco's 2-D walking made by moco_lab (``benchmarks/walking_2d_warm_starts.py``; provenance in
#: ``predicted_walk.md`` there): the dashboard's warm starts.
WALKING_2D_DIR = Path(__file__).resolve().parents[1] / "data" / "walking_2d"
#: The minimum-effort predictions at 1.2 m/s by mesh intervals.
WALKING_2D_PREDICTED = {n: WALKING_2D_DIR / f"predicted_walk_N{n}.sto" for n in (15, 50)}
#: exampleMocoInverse on geometry paths solved by moco_lab without and with the knee-load goals
#: (``benchmarks/walking_3d_knee_load.py``; provenance in ``knee_load.md`` there): activations and knee reactions.
WALKING_3D_DIR = Path(__file__).resolve().parents[1] / "data" / "walking_3d"
WALKING_3D_KNEE_LOAD = {key: WALKING_3D_DIR / f"knee_load_{key}.sto" for key in ("basic", "knee")}


def opensim_files() -> list[str]:
    """Names of the shipped OpenSim files (``.osim``, ``.sto``, ``.mot``, ``.xml``)."""
    return sorted(p.name for p in OPENSIM_DIR.iterdir() if p.suffix in (".osim", ".sto", ".mot", ".xml"))


def opensim_file(name: str) -> Path:
    """The path of a shipped OpenSim file by name (``"2D_gait.osim"``); ``FileNotFoundError`` with suggestions."""
    path = OPENSIM_DIR / Path(name).name
    if not path.exists():
        raise FileNotFoundError(f"No file {name!r}; " + did_you_mean(Path(name).name, opensim_files(), "shipped file"))
    return path


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes (hex): what study files record to notice a model or data file that changed."""
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
