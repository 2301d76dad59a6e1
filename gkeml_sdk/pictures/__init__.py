"""Pictures for notebooks: self-contained inline SVG and HTML (no JavaScript, no network,
no plotting library), drawn from plain numbers and strings so every layer can use them."""
