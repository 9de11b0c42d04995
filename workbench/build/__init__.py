"""Writing DSH session logs from readable scripts (tests, demos, benchmarks).
Layer: build — above core, beside cli: may import io and core, nothing imports it but tests,
bench and cli."""
from workbench.build.builder import LogBuilder
from workbench.build.lineage import Compaction, Prune
from workbench.build.model_calls import Attempt
from workbench.build.state import BuildError
from workbench.build.writer import LogWriter, encode_batch, log_filename, write_log

__all__ = ["Attempt", "BuildError", "Compaction", "LogBuilder", "LogWriter", "Prune",
           "encode_batch", "log_filename", "write_log"]
