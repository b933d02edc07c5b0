"""The answerability reader: pairs and negatives, network, training loop, metrics, ONNX export."""
