package record

// MaxReplyKept is how many bytes of a graded request's reply (its
// content-carrying JSON) are kept for grading. A reply past it is graded
// on what was kept, so a long answer cut short may read as unparsable;
// a multiple-choice or short JSON answer fits many times over. Ungraded
// requests keep nothing.
const MaxReplyKept = 64 << 10
