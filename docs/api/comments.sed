# comments.sed - the headers' plain comments as Doxygen reads them (INPUT_FILTER of
# docs/api/Doxyfile.in): the headers keep the house style (/* ... */, docs: STYLE.md), and
# the API reference is generated from exactly those words.
#   a comment on a line of its own documents what follows it:   /*  ->  /**
#   a comment after a member or an enum value documents that:   /*  ->  /**<
#   the file's opening comment ("name.h - what it holds") documents the file
#   section rulers (/* ---- ... ---- */) stay plain; '@' is Doxygen's, so it is escaped
1s|^/\* \([^ ]*\.h\) - |/*! \\file \1 |
s|@|\\@|g
/^ *\/\* -\{3,\}/b
s|^\( *\)/\* |\1/** |
s|\([;,]\) *\(/\*\) |\1 /**< |
s|\([A-Za-z0-9_)]\) \{2,\}\(/\*\) |\1 /**< |
