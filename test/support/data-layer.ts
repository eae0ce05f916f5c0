import ts from 'typescript';

/**
 * The data layer's seal (test/unit/structure.test.ts): only shared/db/ builds DynamoDB requests. A
 * breach is one of
 * - `command`: an import of a DynamoDB command (or its input/output type) from `@aws-sdk/lib-dynamodb`
 *   or `@aws-sdk/client-dynamodb` (the client itself, shared/clients.ts, and attribute types are not commands);
 * - `expression`: a request's expression field (`ConditionExpression`, `UpdateExpression`, …) or an
 *   expression in a string (`attribute_not_exists(`, `#status = :pending`, a `#name` or `:value` alias, `SET #a = …`);
 *   or the generic update builder (`buildUpdate`) imported from shared/db;
 * - `key`: a table key built by hand (an object's `PK`, `SK`, `GSI1PK`, … or `TableName`, a key prefix such as `'ACC#'`),
 *   or an entity's key function (`executionKey`, `activeSortKey`) imported from shared/db.
 * Comments are not code: a comment may name any of these.
 */
export type Breach = { kind: 'command' | 'expression' | 'key'; line: number; text: string };

const DYNAMODB_PACKAGES = new Set(['@aws-sdk/lib-dynamodb', '@aws-sdk/client-dynamodb']);
const COMMAND_NAME = /Command(Input|Output)?$/;
const EXPRESSION_FIELDS = new Set([
  'ConditionExpression',
  'UpdateExpression',
  'KeyConditionExpression',
  'FilterExpression',
  'ProjectionExpression',
  'ExpressionAttributeNames',
  'ExpressionAttributeValues',
]);
const KEY_FIELDS = /^(PK|SK|GSI\d+(PK|SK)|TableName)$/;
/** A module of the data layer, as a relative import names it. */
const DB_MODULE = /(^|\/)db\//;
/**
 * What builds a request or a key from outside: the update builder, an entity's key function
 * (`executionKey`, `activeSortKey`; not `getApiKey`, nor an S3 object's key, nor the entity functions of
 * a workflow's code key: `claimWorkflowKey`, `workflowIdByKey`).
 */
const BUILDER = /^buildUpdate$/;
const KEY_BUILDER = /^(?!(get|list|put|delete|revoke|restore|create|update|claim|release)[A-Z])[a-z]\w*(?<!Object|By)Key$/;
const EXPRESSION_SYNTAX = [
  /\b(attribute_not_exists|attribute_exists|attribute_type|if_not_exists|list_append|begins_with)\s*\(/,
  /[#:][A-Za-z_]\w*\s*(=|<>|<=|>=|<|>|\bIN\b|\bBETWEEN\b)\s*[#:(]/,
  /^\s*(SET|ADD|REMOVE|DELETE)\s+#?\w+\s*(=|:|,|$)/,
];
/** A `#name` or `:value` alias as a key of the maps a request carries (`{ '#status': 'status' }`). */
const ALIAS = /^[#:][A-Za-z_]\w*$/;
const KEY_PREFIX = /^[A-Z][A-Z0-9_]*#/;

/** The breaches of the seal in one source file's text. */
export function dataLayerBreaches(fileName: string, text: string): Breach[] {
  const source = ts.createSourceFile(
    fileName,
    text,
    ts.ScriptTarget.Latest,
    true,
    fileName.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const found: Breach[] = [];
  const add = (kind: Breach['kind'], node: ts.Node, what: string) =>
    found.push({ kind, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, text: what });
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && DYNAMODB_PACKAGES.has(node.moduleSpecifier.text)) {
      const named = node.importClause?.namedBindings;
      const names = named && ts.isNamedImports(named) ? named.elements.map((e) => (e.propertyName ?? e.name).text) : [];
      for (const name of names.filter((n) => COMMAND_NAME.test(n))) add('command', node, `${name} from ${node.moduleSpecifier.text}`);
      return;
    }
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && DB_MODULE.test(node.moduleSpecifier.text)) {
      const named = node.importClause?.namedBindings;
      const names = named && ts.isNamedImports(named) ? named.elements.map((e) => (e.propertyName ?? e.name).text) : [];
      for (const name of names.filter((n) => BUILDER.test(n))) add('expression', node, `${name} from ${node.moduleSpecifier.text}`);
      for (const name of names.filter((n) => KEY_BUILDER.test(n))) add('key', node, `${name} from ${node.moduleSpecifier.text}`);
      return;
    }
    const field =
      (ts.isPropertyAssignment(node) || ts.isShorthandPropertyAssignment(node)) &&
      (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name))
        ? node.name.text
        : undefined;
    if (field !== undefined && EXPRESSION_FIELDS.has(field)) add('expression', node, field);
    if (field !== undefined && KEY_FIELDS.test(field)) add('key', node, field);
    if (field !== undefined && ALIAS.test(field)) add('expression', node, field);
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      const s = node.text;
      if (EXPRESSION_SYNTAX.some((re) => re.test(s))) add('expression', node, s);
      else if (KEY_PREFIX.test(s)) add('key', node, s);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
