"""Files on disk.

``model_files`` (the model folder's layout and checks), ``onnx_wire`` (external-data
references read from the protobuf wire format), ``external_data`` (weights behind links),
``prepared_store`` and ``prepared_record`` (prepared backbones and what they were built
from).
"""
