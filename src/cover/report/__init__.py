"""Reports: console and Markdown tables, figures (matplotlib, optional) and HTML."""
