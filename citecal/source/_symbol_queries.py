"""Per-language tables of the symbol index: tree-sitter queries and name aliases.

Data, not code: adding a language means adding a :class:`LanguageSpec`
here (and a test in ``tests/source/test_symbols.py``); the indexer in
:mod:`citecal.source._symbols` does not change. Node type names are those
of the grammars shipped by ``tree-sitter-language-pack`` 0.13.0.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LanguageSpec:
    """How to index one tree-sitter language.

    ``query`` captures ``definition.<kind>`` + ``name``; when one node is
    captured by several patterns the earliest pattern wins, so specific
    patterns (an arrow function assigned to a ``const``) come before general
    ones (any ``const``). A ``function``
    whose nearest enclosing definition-like ancestor is one of
    ``method_containers`` becomes a ``method``; ``function_boundaries`` stop
    that search (a function nested in a method stays a function).
    ``string_types`` and ``comment_types`` are the node types indexed as
    string literals and comments.
    """

    grammar: str
    query: str
    string_types: tuple[str, ...]
    comment_types: tuple[str, ...]
    method_containers: frozenset[str] = frozenset()
    function_boundaries: frozenset[str] = frozenset()
    line_patterns: tuple[LinePattern, ...] = ()
    """Definitions written through macros the grammar cannot read (React Native's
    ``RCT_EXPORT_METHOD(name:…)``): found by a regular expression over the text."""


@dataclass(frozen=True, slots=True)
class LinePattern:
    """A definition found by ``regex`` (group ``name``, matched at the start of a line).

    ``end`` says where it ends: ``braces`` at the brace closing the first ``{`` after
    the match, or ``at_end`` at the next line starting with ``@end`` (Objective-C).
    A definition the tree query already found on the same line is not added twice.
    """

    regex: str
    kind: str
    end: str = "braces"


_JS_COMMON = """
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(method_definition name: (_) @name) @definition.method
(variable_declarator name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function
(variable_declarator name: (identifier) @name value: (class)) @definition.class
(assignment_expression
  left: (member_expression object: (this) property: (property_identifier) @name)
  right: [(arrow_function) (function_expression)]) @definition.method
(assignment_expression
  left: (member_expression object: (this) property: (property_identifier) @name)) @definition.field
(assignment_expression
  left: (member_expression property: (property_identifier) @name)
  right: [(arrow_function) (function_expression)]) @definition.function
(pair key: (property_identifier) @name
  value: [(arrow_function) (function_expression)]) @definition.method
(program (lexical_declaration (variable_declarator name: (identifier) @name) @definition.variable))
(program (variable_declaration (variable_declarator name: (identifier) @name) @definition.variable))
(program (export_statement (lexical_declaration
  (variable_declarator name: (identifier) @name) @definition.variable)))
"""

_JS_ONLY = """
(class_declaration name: (_) @name) @definition.class
(class name: (_) @name) @definition.class
(field_definition property: (_) @name value: [(arrow_function) (function_expression)])
  @definition.method
(field_definition property: (_) @name) @definition.field
"""

_TS_ONLY = """
(class_declaration name: (_) @name) @definition.class
(abstract_class_declaration name: (_) @name) @definition.class
(class name: (_) @name) @definition.class
(interface_declaration name: (_) @name) @definition.interface
(type_alias_declaration name: (_) @name) @definition.type
(enum_declaration name: (_) @name) @definition.enum
(internal_module name: (_) @name) @definition.module
(public_field_definition name: (_) @name value: [(arrow_function) (function_expression)])
  @definition.method
(public_field_definition name: (_) @name) @definition.field
(method_signature name: (_) @name) @definition.method
(abstract_method_signature name: (_) @name) @definition.method
(property_signature name: (_) @name) @definition.field
(function_signature name: (_) @name) @definition.function
"""

_JS_STRINGS = ("string", "template_string")

_C_COMMON = """
(function_definition declarator: (function_declarator declarator: (identifier) @name))
  @definition.function
(function_definition declarator: (pointer_declarator
  declarator: (function_declarator declarator: (identifier) @name))) @definition.function
(declaration declarator: (function_declarator declarator: (identifier) @name)) @definition.function
; `int BZ_API(BZ2_bzCompress) (...)`: the name wrapped in an export macro
(function_definition declarator: (function_declarator declarator: (function_declarator
  parameters: (parameter_list . (parameter_declaration type: (type_identifier) @name) .))))
  @definition.function
(struct_specifier name: (type_identifier) @name body: (_)) @definition.struct
(union_specifier name: (type_identifier) @name body: (_)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (_)) @definition.enum
(type_definition type: [(struct_specifier body: (_)) (union_specifier body: (_))]
  declarator: (type_identifier) @name) @definition.struct
(type_definition declarator: (type_identifier) @name) @definition.type
(field_declaration declarator: (field_identifier) @name) @definition.field
(preproc_def name: (identifier) @name) @definition.constant
(preproc_function_def name: (identifier) @name) @definition.function
(enumerator name: (identifier) @name) @definition.constant
"""


LANGUAGE_QUERIES: dict[str, LanguageSpec] = {
    "python": LanguageSpec(
        grammar="python",
        string_types=("string",),
        comment_types=("comment",),
        query="""
(class_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function
(class_definition body: (block (assignment left: (identifier) @name) @definition.field))
(assignment left: (attribute object: (identifier) @_obj attribute: (identifier) @name)
  (#any-of? @_obj "self" "cls")) @definition.field
(module (assignment left: (identifier) @name) @definition.variable)
""",
        method_containers=frozenset({"class_definition"}),
        function_boundaries=frozenset({"function_definition", "lambda"}),
    ),
    "javascript": LanguageSpec(
        grammar="javascript",
        query=_JS_ONLY + _JS_COMMON,
        string_types=_JS_STRINGS,
        comment_types=("comment",),
    ),
    "typescript": LanguageSpec(
        grammar="typescript",
        query=_TS_ONLY + _JS_COMMON,
        string_types=_JS_STRINGS,
        comment_types=("comment",),
    ),
    "tsx": LanguageSpec(
        grammar="tsx",
        query=_TS_ONLY + _JS_COMMON,
        string_types=_JS_STRINGS,
        comment_types=("comment",),
    ),
    "go": LanguageSpec(
        grammar="go",
        string_types=("interpreted_string_literal", "raw_string_literal"),
        comment_types=("comment",),
        query="""
(function_declaration name: (identifier) @name) @definition.function
(method_declaration name: (field_identifier) @name) @definition.method
(type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
(type_spec name: (type_identifier) @name) @definition.type
(type_alias name: (type_identifier) @name) @definition.type
(field_declaration name: (field_identifier) @name) @definition.field
(method_elem name: (field_identifier) @name) @definition.method
(const_spec name: (identifier) @name) @definition.constant
(var_spec name: (identifier) @name) @definition.variable
""",
    ),
    "java": LanguageSpec(
        grammar="java",
        string_types=("string_literal",),
        comment_types=("line_comment", "block_comment"),
        query="""
(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(annotation_type_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
(field_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.field
(constant_declaration declarator: (variable_declarator name: (identifier) @name))
  @definition.constant
(enum_constant name: (identifier) @name) @definition.constant
""",
    ),
    "rust": LanguageSpec(
        grammar="rust",
        string_types=("string_literal", "raw_string_literal"),
        comment_types=("line_comment", "block_comment"),
        query="""
(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.function
(struct_item name: (type_identifier) @name) @definition.struct
(union_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(trait_item name: (type_identifier) @name) @definition.trait
(type_item name: (type_identifier) @name) @definition.type
(field_declaration name: (field_identifier) @name) @definition.field
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.variable
(mod_item name: (identifier) @name) @definition.module
(macro_definition name: (identifier) @name) @definition.function
(impl_item type: [
  (type_identifier) @name
  (generic_type type: (type_identifier) @name)
  (scoped_type_identifier name: (type_identifier) @name)
  (generic_type type: (scoped_type_identifier name: (type_identifier) @name))]) @definition.impl
""",
        method_containers=frozenset({"impl_item", "trait_item"}),
        function_boundaries=frozenset({"function_item", "closure_expression"}),
    ),
    "c": LanguageSpec(
        grammar="c",
        string_types=("string_literal",),
        comment_types=("comment",),
        query=_C_COMMON,
    ),
    "cpp": LanguageSpec(
        grammar="cpp",
        string_types=("string_literal", "raw_string_literal"),
        comment_types=("comment",),
        query="""
(function_definition declarator: (function_declarator declarator: (field_identifier) @name))
  @definition.method
(function_definition declarator: (function_declarator
  declarator: (qualified_identifier name: (identifier) @name))) @definition.method
(field_declaration declarator: (function_declarator declarator: (field_identifier) @name))
  @definition.method
(function_definition declarator: (pointer_declarator
  declarator: (function_declarator declarator: (field_identifier) @name))) @definition.method
(function_definition declarator: (reference_declarator
  (function_declarator declarator: (field_identifier) @name))) @definition.method
(function_definition declarator: (function_declarator declarator: (destructor_name) @name))
  @definition.method
(field_declaration_list (function_definition
  declarator: (function_declarator declarator: (identifier) @name)) @definition.method)
(field_declaration_list (declaration
  declarator: (function_declarator declarator: (identifier) @name)) @definition.method)
(field_declaration declarator: (pointer_declarator declarator: (field_identifier) @name))
  @definition.field
(class_specifier name: (type_identifier) @name body: (_)) @definition.class
(namespace_definition name: (namespace_identifier) @name) @definition.module
"""
        + _C_COMMON,
    ),
    "csharp": LanguageSpec(
        grammar="csharp",
        string_types=("string_literal", "verbatim_string_literal", "raw_string_literal"),
        comment_types=("comment",),
        query="""
(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(struct_declaration name: (identifier) @name) @definition.struct
(enum_declaration name: (identifier) @name) @definition.enum
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
(property_declaration name: (identifier) @name) @definition.field
(field_declaration (variable_declaration (variable_declarator name: (identifier) @name)))
  @definition.field
(enum_member_declaration name: (identifier) @name) @definition.constant
(namespace_declaration name: (_) @name) @definition.module
""",
    ),
    "ruby": LanguageSpec(
        grammar="ruby",
        string_types=("string",),
        comment_types=("comment",),
        query="""
(class name: (constant) @name) @definition.class
(module name: (constant) @name) @definition.module
(singleton_method name: (_) @name) @definition.method
(method name: (_) @name) @definition.function
(assignment left: (constant) @name) @definition.constant
(assignment left: (instance_variable) @name) @definition.field
(call method: (identifier) @_attr arguments: (argument_list (simple_symbol) @name)
  (#any-of? @_attr "attr_reader" "attr_writer" "attr_accessor")) @definition.field
""",
        method_containers=frozenset({"class", "module", "singleton_class"}),
        function_boundaries=frozenset({"method", "singleton_method"}),
    ),
    "kotlin": LanguageSpec(
        grammar="kotlin",
        string_types=("string_literal",),
        comment_types=("line_comment", "multiline_comment"),
        query="""
(class_declaration "enum" (type_identifier) @name) @definition.enum
(class_declaration "interface" (type_identifier) @name) @definition.interface
(class_declaration (type_identifier) @name) @definition.class
(object_declaration (type_identifier) @name) @definition.class
(function_declaration (simple_identifier) @name) @definition.function
(property_declaration (variable_declaration (simple_identifier) @name)) @definition.field
(class_parameter (simple_identifier) @name) @definition.field
(enum_entry (simple_identifier) @name) @definition.constant
(type_alias (type_identifier) @name) @definition.type
""",
        method_containers=frozenset(
            {"class_declaration", "object_declaration", "companion_object"}
        ),
        function_boundaries=frozenset(
            {"function_declaration", "lambda_literal", "anonymous_function"}
        ),
    ),
    "scala": LanguageSpec(
        grammar="scala",
        string_types=("string", "interpolated_string_expression"),
        comment_types=("comment", "block_comment"),
        query="""
(class_definition name: (identifier) @name) @definition.class
(object_definition name: (identifier) @name) @definition.class
(trait_definition name: (identifier) @name) @definition.trait
(enum_definition name: (identifier) @name) @definition.enum
(simple_enum_case name: (identifier) @name) @definition.constant
(full_enum_case name: (identifier) @name) @definition.constant
(function_definition name: (identifier) @name) @definition.function
(function_declaration name: (identifier) @name) @definition.function
(val_definition pattern: (identifier) @name) @definition.field
(var_definition pattern: (identifier) @name) @definition.field
(val_declaration name: (identifier) @name) @definition.field
(class_parameter name: (identifier) @name) @definition.field
(type_definition name: (type_identifier) @name) @definition.type
""",
        method_containers=frozenset({"class_definition", "object_definition", "trait_definition"}),
        function_boundaries=frozenset({"function_definition", "lambda_expression"}),
    ),
    "swift": LanguageSpec(
        grammar="swift",
        string_types=("line_string_literal", "multi_line_string_literal", "raw_string_literal"),
        comment_types=("comment", "multiline_comment"),
        query="""
(protocol_declaration name: (type_identifier) @name) @definition.interface
(class_declaration declaration_kind: "struct" name: (type_identifier) @name) @definition.struct
(class_declaration declaration_kind: "enum" name: (type_identifier) @name) @definition.enum
(class_declaration declaration_kind: "extension" name: (user_type (type_identifier) @name))
  @definition.impl
(class_declaration name: (type_identifier) @name) @definition.class
(function_declaration name: (simple_identifier) @name) @definition.function
(protocol_function_declaration name: (simple_identifier) @name) @definition.method
(init_declaration "init" @name) @definition.method
(source_file (property_declaration name: (pattern (simple_identifier) @name)) @definition.variable)
(class_body (property_declaration name: (pattern (simple_identifier) @name)) @definition.field)
(protocol_property_declaration name: (pattern (simple_identifier) @name)) @definition.field
(typealias_declaration name: (type_identifier) @name) @definition.type
(enum_entry name: (simple_identifier) @name) @definition.constant
""",
        method_containers=frozenset({"class_declaration", "protocol_declaration"}),
        function_boundaries=frozenset({"function_declaration", "lambda_literal"}),
    ),
    "objc": LanguageSpec(
        grammar="objc",
        string_types=("string_literal",),
        comment_types=("comment",),
        query="""
(class_interface . (identifier) @name category: (identifier)) @definition.impl
(class_interface . (identifier) @name) @definition.class
(class_implementation . (identifier) @name) @definition.impl
(protocol_declaration . (identifier) @name) @definition.interface
(method_declaration (method_type) . (identifier) @name) @definition.method
(method_definition (method_type) . (identifier) @name) @definition.method
(property_declaration (struct_declaration (struct_declarator (identifier) @name)))
  @definition.field
(property_declaration (struct_declaration (struct_declarator
  (pointer_declarator declarator: (identifier) @name)))) @definition.field
"""
        + _C_COMMON,
        line_patterns=(
            # tree-sitter reads these macro calls differently in every context
            LinePattern(
                r"[ \t]*RCT_(?:EXPORT|EXPORT_BLOCKING_SYNCHRONOUS)_METHOD\s*\(\s*(?P<name>\w+)",
                "method",
            ),
            LinePattern(r"[ \t]*RCT_REMAP_METHOD\s*\(\s*(?P<name>\w+)\s*,", "method"),
            LinePattern(r"@implementation\s+(?P<name>\w+)", "impl", "at_end"),
            LinePattern(r"@interface\s+(?P<name>\w+)\s*\(", "impl", "at_end"),
            LinePattern(r"@interface\s+(?P<name>\w+)\b(?!\s*\()", "class", "at_end"),
            LinePattern(r"@protocol\s+(?P<name>\w+)\b(?!\s*;)", "interface", "at_end"),
        ),
    ),
    "clojure": LanguageSpec(
        grammar="clojure",
        string_types=("str_lit",),
        comment_types=("comment",),
        query="""
(list_lit . (sym_lit name: (sym_name) @_def) . (sym_lit name: (sym_name) @name)
  (#any-of? @_def "defn" "defn-" "defmacro" "defmulti" "definline")) @definition.function
(list_lit . (sym_lit name: (sym_name) @_def) . (sym_lit name: (sym_name) @name)
  (#eq? @_def "defmethod")) @definition.method
(list_lit . (sym_lit name: (sym_name) @_def) . (sym_lit name: (sym_name) @name)
  (#any-of? @_def "defprotocol" "definterface")) @definition.interface
(list_lit . (sym_lit name: (sym_name) @_def) . (sym_lit name: (sym_name) @name)
  (#any-of? @_def "defrecord" "deftype" "defstruct")) @definition.struct
(list_lit . (sym_lit name: (sym_name) @_def) . (sym_lit name: (sym_name) @name)
  (#any-of? @_def "def" "defonce")) @definition.variable
(list_lit . (sym_lit name: (sym_name) @_def) . (sym_lit name: (sym_name) @name)
  (#eq? @_def "ns")) @definition.module
""",
    ),
    "groovy": LanguageSpec(
        # The bundled Groovy grammar reads code as commands of units and blocks, not as
        # declarations: a definition is a command whose words (modifiers, a type, `def`)
        # come before a block opening with `name(...)`, a class keyword before its name, a
        # field a name before `=`. 157 of 182 gpars methods are found; a parse that
        # recovered from errors is not proof of absence (docs/explanation/routing.md).
        grammar="groovy",
        string_types=("string",),
        comment_types=("line_comment", "block_comment"),
        query="""
(command (unit (identifier) @_kw) . [(unit (identifier) @name) (block . (unit (identifier) @name))]
  (#eq? @_kw "interface")) @definition.interface
(command (unit (identifier) @_kw) . [(unit (identifier) @name) (block . (unit (identifier) @name))]
  (#eq? @_kw "enum")) @definition.enum
(command (unit (identifier) @_kw) . [(unit (identifier) @name) (block . (unit (identifier) @name))]
  (#eq? @_kw "trait")) @definition.trait
(command (unit (identifier) @_kw) . [(unit (identifier) @name) (block . (unit (identifier) @name))]
  (#eq? @_kw "class")) @definition.class
(command (unit (identifier) @_word) . (block . (unit . (func . (identifier) @name)))
  (#not-any-of? @_word "return" "new" "throw" "assert" "if" "else" "while" "for"))
  @definition.function
(command (unit) . (unit (identifier) @name) . (operators) @_op (#eq? @_op "="))
  @definition.field
""",
        line_patterns=(
            # an annotation with arguments before a class derails the grammar
            LinePattern(
                r"[ \t]*(?:(?:public|protected|private|abstract|final|static)\s+)*"
                r"class\s+(?P<name>[A-Za-z_]\w*)",
                "class",
            ),
            LinePattern(
                r"[ \t]*(?:(?:public|protected|private|abstract)\s+)*"
                r"interface\s+(?P<name>[A-Za-z_]\w*)",
                "interface",
            ),
            LinePattern(r"[ \t]*(?:(?:public|private)\s+)*enum\s+(?P<name>[A-Za-z_]\w*)", "enum"),
            LinePattern(r"[ \t]*(?:(?:public|private)\s+)*trait\s+(?P<name>[A-Za-z_]\w*)", "trait"),
        ),
    ),
    "bash": LanguageSpec(
        grammar="bash",
        string_types=("string", "raw_string", "heredoc_body"),
        comment_types=("comment",),
        query="""
(function_definition name: (word) @name) @definition.function
(program (variable_assignment name: (variable_name) @name) @definition.variable)
(program (declaration_command (variable_assignment name: (variable_name) @name))
  @definition.variable)
""",
    ),
}
"""Tree-sitter queries per language (the node-type tables of the index)."""

LANGUAGE_ALIASES: dict[str, str] = {
    "py": "python",
    "python3": "python",
    "js": "javascript",
    "jsx": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "node": "javascript",
    "ts": "typescript",
    "mts": "typescript",
    "cts": "typescript",
    "golang": "go",
    "rs": "rust",
    "c++": "cpp",
    "cxx": "cpp",
    "c#": "csharp",
    "c_sharp": "csharp",
    "cs": "csharp",
    "rb": "ruby",
    "kt": "kotlin",
    "kts": "kotlin",
    "sc": "scala",
    "swift": "swift",
    "objective-c": "objc",
    "objectivec": "objc",
    "m": "objc",
    "mm": "objc",
    "clj": "clojure",
    "cljs": "clojure",
    "cljc": "clojure",
    "sh": "bash",
    "shell": "bash",
    "zsh": "bash",
}
"""Other spellings of the languages in :data:`LANGUAGE_QUERIES`."""


def normalize_language(language: str | None) -> str | None:
    """Canonical language name for ``language`` (``"js"`` → ``"javascript"``), lower-cased."""
    if language is None:
        return None
    name = language.strip().lower()
    return LANGUAGE_ALIASES.get(name, name)


__all__ = [
    "LANGUAGE_ALIASES",
    "LANGUAGE_QUERIES",
    "LanguageSpec",
    "LinePattern",
    "normalize_language",
]
