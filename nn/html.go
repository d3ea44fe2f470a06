package nn

// Every module shows its parameters as an HTML table (name, shape, count,
// total) when it is a cell's value in a notebook; see ParamsHTML.

// HTML returns a table of the parameters for notebooks.
func (g *GPT) HTML() string { return ParamsHTML(g) }

// HTML returns a table of the parameters for notebooks.
func (bl *Block) HTML() string { return ParamsHTML(bl) }

// HTML returns a table of the parameters for notebooks.
func (a *CausalSelfAttention) HTML() string { return ParamsHTML(a) }

// HTML returns a table of the parameters for notebooks.
func (m *MLP) HTML() string { return ParamsHTML(m) }

// HTML returns a table of the parameters for notebooks.
func (l *Linear) HTML() string { return ParamsHTML(l) }

// HTML returns a table of the parameters for notebooks.
func (e *Embedding) HTML() string { return ParamsHTML(e) }

// HTML returns a table of the parameters for notebooks.
func (ln *LayerNorm) HTML() string { return ParamsHTML(ln) }

// HTML returns a table (empty: dropout has no parameters) for notebooks.
func (d *Dropout) HTML() string { return ParamsHTML(d) }

// HTML returns a table (empty: GELU has no parameters) for notebooks.
func (g GELU) HTML() string { return ParamsHTML(g) }
