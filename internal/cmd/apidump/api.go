package main

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// dumper lists the API of one package.
type dumper struct {
	name   string // package name
	prefix string // "pkg <import path>, "
	files  []*ast.File
	tree   *tree                 // to evaluate constants of the repository's other packages
	consts map[string]*constDecl // every package-level constant, exported or not
	lines  []string
}

// constDecl is one constant with the type and expression it has after
// the implicit repetition of a const group is applied.
type constDecl struct {
	typ     ast.Expr // nil when untyped
	val     ast.Expr // nil when the declaration is invalid
	iota    int64
	imports map[string]string // package name → import path, in the constant's file

	done, busy bool // evaluation state
	value      constant.Value
}

func newDumper(importPath, name string, files []*ast.File, t *tree) *dumper {
	d := &dumper{name: name, prefix: "pkg " + importPath + ", ", files: files, tree: t, consts: map[string]*constDecl{}}
	for _, f := range files {
		d.collectConsts(f)
	}
	return d
}

// apiLines returns the package's API lines, sorted.
func (d *dumper) apiLines() []string {
	if d.lines == nil {
		for _, f := range d.files {
			for _, decl := range f.Decls {
				switch decl := decl.(type) {
				case *ast.FuncDecl:
					d.funcDecl(decl)
				case *ast.GenDecl:
					d.genDecl(decl)
				}
			}
		}
		slices.Sort(d.lines)
		d.lines = slices.Compact(d.lines)
	}
	return d.lines
}

func (d *dumper) add(s string) { d.lines = append(d.lines, d.prefix+s) }

func (d *dumper) collectConsts(f *ast.File) {
	imports := map[string]string{}
	for _, is := range f.Imports {
		p, err := strconv.Unquote(is.Path.Value)
		if err != nil {
			continue
		}
		name := path.Base(p) // the repository's packages are named after their directory
		if is.Name != nil {
			name = is.Name.Name
		}
		imports[name] = p
	}
	for _, decl := range f.Decls {
		g, ok := decl.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		var typ ast.Expr
		var vals []ast.Expr
		for i, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			if vs.Type != nil || len(vs.Values) > 0 {
				typ, vals = vs.Type, vs.Values
			}
			for j, name := range vs.Names {
				c := &constDecl{typ: typ, iota: int64(i), imports: imports}
				if j < len(vals) {
					c.val = vals[j]
				}
				d.consts[name.Name] = c
			}
		}
	}
}

func (d *dumper) funcDecl(fn *ast.FuncDecl) {
	if !fn.Name.IsExported() {
		return
	}
	sig := typeParams(fn.Type.TypeParams) + signature(fn.Type)
	if fn.Recv == nil {
		d.add("func " + fn.Name.Name + sig)
		return
	}
	if len(fn.Recv.List) != 1 || !ast.IsExported(baseName(fn.Recv.List[0].Type)) {
		return
	}
	d.add("method (" + typeString(fn.Recv.List[0].Type) + ") " + fn.Name.Name + sig)
}

func (d *dumper) genDecl(g *ast.GenDecl) {
	for _, spec := range g.Specs {
		switch spec := spec.(type) {
		case *ast.TypeSpec:
			d.typeSpec(spec)
		case *ast.ValueSpec:
			for i, name := range spec.Names {
				if !name.IsExported() {
					continue
				}
				if g.Tok == token.CONST {
					d.constLine(name.Name)
				} else {
					d.varLine(spec, i)
				}
			}
		}
	}
}

func (d *dumper) typeSpec(ts *ast.TypeSpec) {
	if !ts.Name.IsExported() {
		return
	}
	head := "type " + ts.Name.Name + typeParams(ts.TypeParams)
	if ts.Assign.IsValid() {
		d.add(head + " = " + typeString(ts.Type))
		return
	}
	switch t := ts.Type.(type) {
	case *ast.StructType:
		d.add(head + " struct")
		for _, f := range t.Fields.List {
			if len(f.Names) == 0 {
				if ast.IsExported(baseName(f.Type)) {
					d.add(head + " struct, embedded " + typeString(f.Type))
				}
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					d.add(head + " struct, " + n.Name + " " + typeString(f.Type))
				}
			}
		}
	case *ast.InterfaceType:
		d.add(head + " interface")
		unexported := false
		for _, m := range t.Methods.List {
			switch {
			case len(m.Names) == 0:
				if _, ok := m.Type.(*ast.Ident); ok || isQualified(m.Type) {
					d.add(head + " interface, embedded " + typeString(m.Type))
				} else {
					d.add(head + " interface, " + typeString(m.Type)) // a type set term
				}
			case m.Names[0].IsExported():
				d.add(head + " interface, " + m.Names[0].Name + signature(m.Type.(*ast.FuncType)))
			default:
				unexported = true
			}
		}
		if unexported {
			d.add(head + " interface, unexported methods")
		}
	default:
		d.add(head + " " + typeString(ts.Type))
	}
}

func isQualified(e ast.Expr) bool {
	_, ok := e.(*ast.SelectorExpr)
	return ok
}

var iotaWord = regexp.MustCompile(`\biota\b`)

func (d *dumper) constLine(name string) {
	c := d.consts[name]
	line := "const " + name
	if typ := d.constType(c); typ != nil {
		line += " " + typeString(typ)
	}
	if c.val == nil {
		d.add(line)
		return
	}
	// The value is worth computing when the expression alone does not
	// show it.
	if d.hidesValue(c) {
		if v, ok := d.eval(c); ok {
			d.add(line + " = " + v.ExactString())
			return
		}
		d.add(line + " = " + iotaWord.ReplaceAllString(types.ExprString(c.val), strconv.FormatInt(c.iota, 10)))
		return
	}
	d.add(line + " = " + types.ExprString(c.val))
}

// constType returns the declared type of c or, for const B = A, the type
// of the package's constant A; nil when untyped or not known.
func (d *dumper) constType(c *constDecl) ast.Expr {
	for range len(d.consts) { // bounded: const A = B; const B = A is invalid
		if c.typ != nil {
			return c.typ
		}
		id, ok := c.val.(*ast.Ident)
		if !ok || d.consts[id.Name] == nil {
			return nil
		}
		c = d.consts[id.Name]
	}
	return nil
}

// hidesValue reports whether the expression of c mentions iota, a
// constant of the package or one of an internal package of the repository:
// a constant of another public package is left as written, as its value is
// in that package's file.
func (d *dumper) hidesValue(c *constDecl) bool {
	found := false
	ast.Inspect(c.val, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok {
				p := c.imports[x.Name]
				_, inRepo := d.tree.dir(p)
				found = inRepo && (strings.Contains(p, "/internal/") || strings.HasSuffix(p, "/internal"))
			}
			return false
		case *ast.Ident:
			if _, ok := d.consts[n.Name]; ok || n.Name == "iota" {
				found = true
			}
		}
		return !found
	})
	return found
}

func (d *dumper) eval(c *constDecl) (constant.Value, bool) {
	if c.done {
		return c.value, c.value != nil
	}
	if c.busy || c.val == nil {
		return nil, false
	}
	c.busy = true
	v := d.evalExpr(c.val, c)
	if v != nil && c.typ != nil {
		if id, ok := c.typ.(*ast.Ident); ok && (id.Name == "float32" || id.Name == "float64") {
			v = constant.ToFloat(v)
		}
	}
	c.busy, c.done, c.value = false, true, v
	return v, v != nil
}

// evalExpr evaluates the expression e of constant c, made of literals,
// iota, operators, conversions and constants of the repository; it returns
// nil for anything else.
func (d *dumper) evalExpr(e ast.Expr, c *constDecl) (v constant.Value) {
	defer func() {
		if recover() != nil { // mismatched operands
			v = nil
		}
	}()
	switch e := e.(type) {
	case *ast.BasicLit:
		v = constant.MakeFromLiteral(e.Value, e.Kind, 0)
		if v.Kind() == constant.Unknown {
			return nil
		}
		return v
	case *ast.Ident:
		switch e.Name {
		case "iota":
			return constant.MakeInt64(c.iota)
		case "true", "false":
			return constant.MakeBool(e.Name == "true")
		}
		if ref, ok := d.consts[e.Name]; ok {
			v, _ := d.eval(ref)
			return v
		}
		return nil
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		if !ok {
			return nil
		}
		return d.tree.constValue(c.imports[x.Name], e.Sel.Name)
	case *ast.ParenExpr:
		return d.evalExpr(e.X, c)
	case *ast.UnaryExpr:
		x := d.evalExpr(e.X, c)
		if x == nil {
			return nil
		}
		return constant.UnaryOp(e.Op, x, 0)
	case *ast.BinaryExpr:
		x, y := d.evalExpr(e.X, c), d.evalExpr(e.Y, c)
		if x == nil || y == nil {
			return nil
		}
		switch e.Op {
		case token.SHL, token.SHR:
			s, ok := constant.Uint64Val(y)
			if !ok {
				return nil
			}
			return constant.Shift(x, e.Op, uint(s))
		case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
			return constant.MakeBool(constant.Compare(x, e.Op, y))
		case token.QUO:
			if x.Kind() == constant.Int && y.Kind() == constant.Int {
				return constant.BinaryOp(x, token.QUO_ASSIGN, y) // integer division
			}
		}
		return constant.BinaryOp(x, e.Op, y)
	case *ast.CallExpr:
		// A conversion T(x) to a numeric or named type keeps the value.
		if len(e.Args) != 1 {
			return nil
		}
		id, ok := e.Fun.(*ast.Ident)
		if !ok || id.Name == "string" || id.Name == "len" || id.Name == "cap" || id.Name == "complex" ||
			id.Name == "real" || id.Name == "imag" || id.Name == "min" || id.Name == "max" {
			return nil
		}
		x := d.evalExpr(e.Args[0], c)
		if x != nil && (id.Name == "float32" || id.Name == "float64") {
			x = constant.ToFloat(x)
		}
		return x
	}
	return nil
}

func (d *dumper) varLine(vs *ast.ValueSpec, i int) {
	name := vs.Names[i].Name
	if vs.Type != nil {
		d.add("var " + name + " " + typeString(vs.Type))
		return
	}
	if len(vs.Values) != len(vs.Names) {
		// var a, b = f(): the i-th result of the call.
		d.add("var " + name + " = " + types.ExprString(vs.Values[0]) + "[" + strconv.Itoa(i) + "]")
		return
	}
	switch v := vs.Values[i].(type) {
	case *ast.CallExpr:
		if s, ok := v.Fun.(*ast.SelectorExpr); ok {
			if fn := types.ExprString(s); fn == "errors.New" || fn == "fmt.Errorf" {
				d.add("var " + name + " error")
				return
			}
		}
	case *ast.CompositeLit:
		if v.Type != nil {
			d.add("var " + name + " " + typeString(v.Type))
			return
		}
	case *ast.UnaryExpr:
		if cl, ok := v.X.(*ast.CompositeLit); ok && v.Op == token.AND && cl.Type != nil {
			d.add("var " + name + " *" + typeString(cl.Type))
			return
		}
	}
	d.add("var " + name + " = " + types.ExprString(vs.Values[i]))
}

// baseName returns the name of the type a receiver or embedded field
// refers to: T for T, *T, T[K], pkg.T.
func baseName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.SelectorExpr:
			return t.Sel.Name
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// typeParams prints a type parameter list, one name per constraint:
// [K comparable, V any].
func typeParams(fl *ast.FieldList) string {
	if fl == nil || len(fl.List) == 0 {
		return ""
	}
	var parts []string
	for _, f := range fl.List {
		for _, n := range f.Names {
			parts = append(parts, n.Name+" "+typeString(f.Type))
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// signature prints the parameters and results of a function type without
// their names, which are no part of the API: (context.Context, string) error.
func signature(ft *ast.FuncType) string {
	s := "(" + strings.Join(fieldTypes(ft.Params), ", ") + ")"
	res := fieldTypes(ft.Results)
	switch len(res) {
	case 0:
	case 1:
		s += " " + res[0]
	default:
		s += " (" + strings.Join(res, ", ") + ")"
	}
	return s
}

// fieldTypes returns the type of each parameter of fl, repeated for
// parameters declared together (a, b int).
func fieldTypes(fl *ast.FieldList) []string {
	if fl == nil {
		return nil
	}
	var out []string
	for _, f := range fl.List {
		t := typeString(f.Type)
		for range max(1, len(f.Names)) {
			out = append(out, t)
		}
	}
	return out
}

// typeString prints a type expression on one line, dropping the parameter
// names of function types.
func typeString(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.SelectorExpr:
		return typeString(t.X) + "." + t.Sel.Name
	case *ast.StarExpr:
		return "*" + typeString(t.X)
	case *ast.ParenExpr:
		return "(" + typeString(t.X) + ")"
	case *ast.Ellipsis:
		return "..." + typeString(t.Elt)
	case *ast.ArrayType:
		switch t.Len.(type) {
		case nil:
			return "[]" + typeString(t.Elt)
		case *ast.Ellipsis:
			return "[...]" + typeString(t.Elt)
		}
		return "[" + types.ExprString(t.Len) + "]" + typeString(t.Elt)
	case *ast.MapType:
		return "map[" + typeString(t.Key) + "]" + typeString(t.Value)
	case *ast.ChanType:
		switch t.Dir {
		case ast.SEND:
			return "chan<- " + typeString(t.Value)
		case ast.RECV:
			return "<-chan " + typeString(t.Value)
		}
		return "chan " + typeString(t.Value)
	case *ast.FuncType:
		return "func" + signature(t)
	case *ast.IndexExpr:
		return typeString(t.X) + "[" + typeString(t.Index) + "]"
	case *ast.IndexListExpr:
		args := make([]string, len(t.Indices))
		for i, x := range t.Indices {
			args[i] = typeString(x)
		}
		return typeString(t.X) + "[" + strings.Join(args, ", ") + "]"
	case *ast.UnaryExpr: // ~T in a constraint
		return t.Op.String() + typeString(t.X)
	case *ast.BinaryExpr: // A | B in a constraint
		return typeString(t.X) + " " + t.Op.String() + " " + typeString(t.Y)
	case *ast.StructType:
		var fields []string
		for _, f := range t.Fields.List {
			ft := typeString(f.Type)
			if len(f.Names) == 0 {
				fields = append(fields, ft)
			}
			for _, n := range f.Names {
				fields = append(fields, n.Name+" "+ft)
			}
		}
		return "struct{" + strings.Join(fields, "; ") + "}"
	case *ast.InterfaceType:
		var elems []string
		for _, m := range t.Methods.List {
			if len(m.Names) == 0 {
				elems = append(elems, typeString(m.Type))
				continue
			}
			elems = append(elems, m.Names[0].Name+signature(m.Type.(*ast.FuncType)))
		}
		return "interface{" + strings.Join(elems, "; ") + "}"
	}
	return types.ExprString(e)
}
