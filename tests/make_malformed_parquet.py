"""How the malformed Parquet files here were made (with pyarrow, from the golden set's Parquet):

    python tests/make_malformed_parquet.py
"""
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent / "malformed"
GOLDEN = HERE.parent.parent / "golden_roundtrips" / "support-agent.parquet"


def main() -> None:
    data = GOLDEN.read_bytes()
    (HERE / "truncated.parquet").write_bytes(data[: len(data) // 2])  # PAR1 at the start, no footer
    pq.write_table(pa.table({"question": ["What is 2+2?"], "answer": ["4"]}), HERE / "wrong-schema.parquet")
    table = pq.read_table(GOLDEN).slice(0, 2)
    i = table.schema.get_field_index("input")
    pq.write_table(table.set_column(i, pa.field("input", pa.int64()), pa.array([1, 2], pa.int64())),
                   HERE / "wrong-type.parquet")
    table = pq.read_table(GOLDEN).slice(0, 3)
    j = table.schema.get_field_index("expected:json")
    values = table.column("expected:json").to_pylist()
    values[1] = '{"broken": '
    pq.write_table(table.set_column(j, table.schema.field(j), pa.array(values, pa.string())),
                   HERE / "bad-json-cell.parquet")
    (HERE / "not-parquet.parquet").write_text("id,input\nx,y\n", encoding="utf-8")


if __name__ == "__main__":
    main()
