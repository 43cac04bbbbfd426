"""The converter's per-store features handed to TVM's ``XGBModel`` as its feature extractor."""

from __future__ import annotations

from tvm.ir.utils import derived_object
from tvm.s_tir.meta_schedule.feature_extractor import PyFeatureExtractor

from tvm_tgraph.convert.tir.store_extractor import PerStoreRows


@derived_object
class SharedPerStoreFeature(PyFeatureExtractor):
    """TVM's ``PerStoreFeature`` read through a :class:`PerStoreRows` cache that a
    :class:`~tvm_tgraph.convert.tir.TirConverter` also reads (``converter.store_rows``):
    ``XGBModel(extractor=SharedPerStoreFeature(converter.store_rows))`` extracts no candidate
    the converter has extracted. Extraction is most of XGBoost's ``predict`` time."""

    def __init__(self, rows: PerStoreRows) -> None:
        super().__init__()
        self.rows = rows

    def extract_from(self, context, candidates) -> list:
        """The candidates' rows as TVM tensors, as MetaSchedule's cost models take them."""
        import tvm

        return [tvm.runtime.tensor(rows) for rows in self.rows.rows(context, candidates)]
