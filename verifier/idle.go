package verifier

import "reflect"

// pruneIdle removes the per-tenant and per-consumer entries whose numbers are all 0 and counts them
// in PerTenantIdle and PerConsumerIdle: a run of 100,000 silent tenants would otherwise write
// 100,000 blocks of zeros. Entries with any activity or anomaly stay as they are.
func pruneIdle(s *Summary) {
	for id, st := range s.PerTenant {
		if isIdle(st) {
			delete(s.PerTenant, id)
		}
	}
	for id, st := range s.PerConsumer {
		if isIdle(st) {
			delete(s.PerConsumer, id)
		}
	}
}

// countIdle sets PerTenantIdle and PerConsumerIdle from the run's tenants and consumers and the
// entries pruneIdle kept.
func countIdle(s *Summary, ix *index) {
	s.PerTenantIdle = int64(len(ix.tenantNames) - len(s.PerTenant))
	s.PerConsumerIdle = int64(len(ix.cons) - len(s.PerConsumer))
}

// isIdle reports whether every number of st is 0: its ints and floats, those nested in its structs,
// and the values of its maps (lost_by_reason names crash and silent even when both are 0). Strings
// (whose numbers they are) do not count. Walking the struct, not listing its fields, keeps a field
// added to Stats from being dropped from an entry that has it.
func isIdle(st *Stats) bool { return zeroNumbers(reflect.ValueOf(st).Elem()) }

func zeroNumbers(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.String:
		return true
	case reflect.Struct:
		for i := range v.NumField() {
			if !zeroNumbers(v.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if !zeroNumbers(it.Value()) {
				return false
			}
		}
		return true
	case reflect.Slice:
		for i := range v.Len() {
			if !zeroNumbers(v.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Pointer, reflect.Interface:
		return v.IsNil() || zeroNumbers(v.Elem())
	}
	return false // a kind Stats does not have: keep the entry
}
