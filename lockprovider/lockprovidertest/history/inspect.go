package history

// inspect judges a read of the name's state: held means a lease in force
// at some instant of the call, with the token of the lease the model
// holds; free means none was, so the lease had ended by the call's return.
func inspect(b bounds, s state, op *Op, start int64) []state {
	if op.Result != OK {
		return []state{s} // a read that failed changed nothing
	}
	if start > op.Return {
		return nil
	}
	n := s
	n.lo = start
	if op.Held {
		if s.holder == "" || s.phase == ended || start >= s.untilHi+b.linger+b.skew {
			return nil
		}
		switch {
		case s.token == 0 && op.Lease.Token > s.last:
			// The grant of unknown outcome took effect: this is its token.
			n.token, n.last = op.Lease.Token, op.Lease.Token
		case op.Lease.Token != s.token:
			return nil
		}
		return []state{n}
	}
	switch {
	case s.free(b, start) || s.phase == ended:
	case op.Return >= s.untilLo-b.skew:
		n.lo = max(start, s.untilLo-b.skew)
	default:
		return nil // the lease was in force throughout
	}
	return []state{n}
}
