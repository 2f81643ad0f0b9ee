"""The standalone Bullpen site: the first host of the ``dashboard`` app."""
