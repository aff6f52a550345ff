"""Printing: the ascendc dialect as AscendC C++, and the API-surface table checked against asc-devkit."""
