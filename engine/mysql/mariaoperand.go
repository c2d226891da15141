package mysql

// maxSoundsLike bounds the SOUNDS LIKE of one statement rewritten: each
// looks back over its left operand.
const maxSoundsLike = 64

// soundsLike rewrites the a SOUNDS LIKE b at token k (within [i, j)) as
// SOUNDEX(a) = SOUNDEX(b): = has SOUNDS LIKE's precedence. a and b must be
// operands that end at the comparison on both sides (a name, a literal, a
// variable, a call or a parenthesised expression, between tokens that
// bind less than a comparison); anything else is not rewritten.
func (r *mread) soundsLike(i, j, k int) ([]edit, bool) {
	la := r.operandBefore(i, k)
	rb := r.operandAfter(k+2, j)
	if la < 0 || rb < 0 {
		return nil, false
	}
	if !r.looseBefore(la-1, i) || !r.looseAfter(rb, j) {
		return nil, false
	}
	return []edit{
		{la, la, "SOUNDEX("},
		{k, k + 2, ") = SOUNDEX("},
		{rb, rb, ")"},
	}, true
}

// operandBefore returns the first token of the operand that ends just
// before k, or -1.
func (r *mread) operandBefore(i, k int) int {
	e := k - 1
	if e < i {
		return -1
	}
	if r.kind(e) == ')' {
		depth := 0
		for m := e; m >= i; m-- {
			switch r.kind(m) {
			case ')':
				depth++
			case '(':
				depth--
				if depth == 0 {
					if m-1 >= i && r.kind(m-1) == tokWord && !r.loose(m-1) {
						return m - 1 // a call
					}
					return m
				}
			}
		}
		return -1
	}
	if !r.atom(e) {
		return -1
	}
	for e-2 >= i && r.kind(e-1) == '.' && r.isName(e-2) {
		e -= 2
	}
	if e-1 >= i && r.kind(e-1) == '@' {
		e--
		if e-1 >= i && r.kind(e-1) == '@' {
			e--
		}
	}
	return e
}

// operandAfter returns the index after the operand that starts at k, or -1.
func (r *mread) operandAfter(k, j int) int {
	if k >= j {
		return -1
	}
	for r.kind(k) == '@' && k < j {
		k++
	}
	if r.kind(k) == tokWord && r.kind(k+1) == '(' || r.kind(k) == '(' {
		if r.kind(k) == tokWord {
			k++
		}
		depth := 0
		for m := k; m < j; m++ {
			switch r.kind(m) {
			case '(':
				depth++
			case ')':
				depth--
				if depth == 0 {
					return m + 1
				}
			}
		}
		return -1
	}
	if !r.atom(k) {
		return -1
	}
	k++
	for k+1 < j && r.kind(k) == '.' && r.isName(k+1) {
		k += 2
	}
	return k
}

// atom reports whether token k is a name, literal or number, not a
// keyword that binds.
func (r *mread) atom(k int) bool {
	switch r.kind(k) {
	case tokString, tokIdent:
		return true
	case tokWord:
		return !r.loose(k)
	}
	return false
}

// loose reports whether token k is a word that binds less than a
// comparison, or starts a clause.
func (r *mread) loose(k int) bool {
	return r.isAny(k, "and", "or", "xor", "not", "where", "having", "on", "select", "when", "then", "else", "end",
		"from", "order", "group", "limit", "as", "by", "set", "if", "return", "into", "union", "case", "do", "until", "like", "sounds", "is", "in", "between", "regexp", "rlike", "escape", "div", "mod", "binary", "collate", "interval")
}

// looseBefore reports whether token k (before an operand) binds less than
// a comparison.
func (r *mread) looseBefore(k, i int) bool {
	if k < i {
		return true
	}
	switch r.kind(k) {
	case '(', ',':
		return true
	case '&':
		return r.kind(k-1) == '&'
	case '|':
		return r.kind(k-1) == '|'
	case '!':
		return true
	}
	return r.isAny(k, "and", "or", "xor", "not", "where", "having", "on", "select", "when", "then", "else", "if", "return", "do", "until", "set")
}

// looseAfter reports whether token k (after an operand) binds less than a
// comparison.
func (r *mread) looseAfter(k, j int) bool {
	if k >= j {
		return true
	}
	switch r.kind(k) {
	case ')', ',', ';':
		return true
	case '&':
		return r.kind(k+1) == '&'
	case '|':
		return r.kind(k+1) == '|'
	}
	return r.isAny(k, "and", "or", "xor", "then", "else", "end", "when", "from", "order", "group", "limit", "having", "as", "union", "do", "into", "for", "lock", "window")
}

// operator reports whether a token kind is an operator byte.
func operator(k byte) bool {
	switch k {
	case '=', '<', '>', '!', '+', '-', '*', '/', '%', '|', '&', '^':
		return true
	}
	return false
}

// closeParen returns the index of the ")" that closes the "(" at k, or -1.
func (r *mread) closeParen(k, j int) int {
	depth := 0
	for m := k; m < j; m++ {
		switch r.kind(m) {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return m
			}
		}
	}
	return -1
}
