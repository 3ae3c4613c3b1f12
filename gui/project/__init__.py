"""The segment editor: a project's segments and takes as a Qt model, its view and its panel."""
