"""Generate movies in the IntPhys format, deterministically from a seed.

Layout (as in the IntPhys releases; Riochet et al. 2018, IntPhys V1.0, "Train set", "Dev and Test")::

    <root>/train/<index:05d>/{scene,depth,masks}/<kind>_<001..NNN>.png + status.json
    <root>/<dev|test>/<block>/<index:04d>/<run 1..4>/{scene,depth,masks}/... + status.json

The scene is a 2-D rendering: a textured back wall and floor (and a strip of
sky), coloured disks and squares standing in "lanes" on the floor (one lane per
object, so objects never overlap each other), and, in the occluded condition, an
occluder screen that drops from the top in front of the critical event and is
lifted again. Depth is a z-buffer of the same scene in millimetres (sky 10 m,
back wall 4 m, floor 4 m at the horizon to 1 m at the bottom, disks bulge
towards the camera, occluders in front of everything). Masks hold one gray value
per element, listed in ``masks_grayscale`` as in the V1.0 example (evenly spaced
from 0 to 255).

Dev/test quadruplets (one per block x visibility x n_objects x motion x repeat)
share every scene parameter and differ only in the critical event at frame
``t_c = n_frames // 2``, with two states ``a`` and ``b`` of the critical object:

========  =======================  ==============================
block     state a                  state b
========  =======================  ==============================
O1        object present           object absent
O2        one shape (disk/square)  the other shape, same area
O3        trajectory A             trajectory A shifted by 0.28 W
========  =======================  ==============================

Possible runs keep one state throughout (``a a`` and ``b b``); impossible runs
switch at ``t_c`` (``a b`` and ``b a``). So over a quadruplet the possible and
impossible movies show the same frames in total (IntPhys' matched design).
``n_objects`` is the larger object count of the quadruplet (1, 2, 3): in O1 the
event changes 0 vs 1, 1 vs 2 or 2 vs 3 visible objects; in O2 and O3 it is the
number of objects in the scene. Motion: ``static``; ``dynamic_1`` = constant
velocity (0.24 W over the movie); ``dynamic_2`` = one back-and-forth
oscillation (amplitude 0.12 W). Runs are shuffled per quadruplet in dev (the
status.json says which are possible); in test runs 1-2 are possible and 3-4
impossible before a seeded shuffle too (as in the real release).

Two status.json variants (``status_variant``): ``"v1"`` is the flat V1.0 file
(``block``, ``possible``, ``floor``, ``camera``, ``lights``, ``max_depth``,
``masks_grayscale``, ``frames``); ``"header"`` is the later
``{"header": {...}, "frames": [...]}``. Two depth encodings
(``depth_encoding``): ``"8bit"`` = round(255 * depth / max_depth) with
``max_depth`` (mm) in status.json (V1.0), ``"16bit"`` = 65535 - depth in mm.
Both files carry the condition keys ``visibility``, ``motion``, ``n_objects``.

Modules
-------
scenes
    Conditions, scene parameters, objects, occluders and their motion.
render
    Frames, depth, masks and status.json of one run; writing a movie directory.
tree
    One split of the tree (:func:`generate_intphys`), built under a temporary
    sibling and renamed into place.
"""

from psybench.intphys.generate.scenes import BLOCKS, MOTIONS, N_OBJECTS, VISIBILITIES, dev_conditions
from psybench.intphys.generate.tree import expected_movie_ids, generate_intphys

__all__ = [
    "BLOCKS",
    "VISIBILITIES",
    "MOTIONS",
    "N_OBJECTS",
    "generate_intphys",
    "expected_movie_ids",
    "dev_conditions",
]
