"""Reading bytes into events. Layer: io — stdlib, zstandard, orjson only; never imports core."""
