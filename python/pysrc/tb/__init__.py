"""Probe tb tables (Dots-and-Boxes, Nine Men's Morris, Qubic) and run the
Dots-and-Boxes search solver: ``tb.open(path).probe(position)``,
``.probe_many(positions)``, ``.info()``, ``tb.solve(board, position)``.

The names are those of the extension module ``tb.tb``; ``tb.dask`` (with the
``dask`` extra: ``pip install tb[dask]``) builds tables on a Dask cluster:
``python -m tb.dask build GAME ... (--local N | --scheduler ADDRESS) --shared DIR
--db FILE``.
"""

from .tb import *  # noqa: F401,F403
from .tb import Answers, Error, PositionError, SearchLimitError, Table, TableError, open, solve  # noqa: F401
from .tb import __version__  # noqa: F401
