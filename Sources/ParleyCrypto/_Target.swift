// placeholder so the target builds while the layer is written
