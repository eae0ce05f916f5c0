// Loaded with require semantics: see ../bundling.ts (ALIASES).
module.exports = process.getBuiltinModule('node:http');
