"""Print each .npy file as: NAME DTYPE SHAPE VALUES (for the runner tests)."""
import os
import sys

import numpy as np

for path in sys.argv[1:]:
    a = np.load(path)
    print(os.path.basename(path), a.dtype, a.shape, a.tolist())
