"""Tools over the environments: the speed benchmark against peers (``bench``)."""
