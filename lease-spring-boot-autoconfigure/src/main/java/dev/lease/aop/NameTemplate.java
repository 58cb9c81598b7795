package dev.lease.aop;

import java.util.function.Supplier;
import java.util.function.UnaryOperator;

import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.common.CompositeStringExpression;
import org.springframework.expression.common.TemplateParserContext;
import org.springframework.expression.spel.standard.SpelExpressionParser;

import dev.lease.core.LeaseConfigurationException;

/**
 * A name written in an annotation attribute (a lease name, a fence resource): a literal checked once at startup, or
 * text with {@code #{...}} SpEL parts over the call's arguments, evaluated per call.
 *
 * @param literal the name when it has no {@code #{...}} part, else null
 * @param template the parsed template when it has, else null
 */
record NameTemplate(String literal, Expression template) {

    private static final SpelExpressionParser PARSER = new SpelExpressionParser();
    private static final TemplateParserContext TEMPLATE = new TemplateParserContext();

    /**
     * @param where the annotated method, for messages
     * @param attribute the attribute the text comes from
     * @param validate checks a literal, throwing {@link IllegalArgumentException} saying why it is refused
     * @param literalExample a valid literal, shown in the fix
     * @param templateExample a valid template, shown in the fix
     */
    static NameTemplate parse(String where, String attribute, String text, UnaryOperator<String> validate,
            String literalExample, String templateExample) {
        if (!text.contains(TEMPLATE.getExpressionPrefix())) {
            try {
                return new NameTemplate(validate.apply(text), null);
            }
            catch (IllegalArgumentException ex) {
                throw new LeaseConfigurationException(where + ": " + attribute + " \"" + text + "\": " + ex.getMessage(),
                        "give it a non-blank value that names what the lease protects, e.g. \"" + literalExample + "\".");
            }
        }
        try {
            return new NameTemplate(null, PARSER.parseExpression(text, TEMPLATE));
        }
        catch (ParseException ex) {
            throw new LeaseConfigurationException(where + ": " + attribute + " \"" + text + "\" is not a valid SpEL "
                    + "template (" + ex.getMessage() + ").", "write it as text with #{...} parts, e.g. \"" + templateExample + "\".");
        }
    }

    /**
     * The name for one call. Each {@code #{...}} part must yield a value: a misspelt parameter (or one whose name was
     * not compiled in) would otherwise evaluate to nothing and silently put every call under one shared name.
     *
     * @param what how messages name it, such as "the lease name of InvoiceService.bill(long)"
     */
    String evaluate(String what, Supplier<EvaluationContext> context) {
        if (literal != null) {
            return literal;
        }
        Expression[] parts = template instanceof CompositeStringExpression composite ? composite.getExpressions()
                : new Expression[] {template};
        EvaluationContext evaluation = context.get();
        StringBuilder name = new StringBuilder();
        for (Expression part : parts) {
            Object value = part.getValue(evaluation);
            if (value == null) {
                throw new IllegalArgumentException(capitalized(what) + " cannot be built: #{" + part.getExpressionString()
                        + "} evaluated to null. Refer to arguments by their names (compile with -parameters) or as "
                        + "#p0, #p1..., and make sure the value is not null.");
            }
            name.append(value);
        }
        return name.toString();
    }

    /** Refuses a blank literal. */
    static String checkNotBlank(String text) {
        if (text.isBlank()) {
            throw new IllegalArgumentException("it is blank");
        }
        return text;
    }

    /** The literal or the template as written, quoted. */
    String describe() {
        return "'" + (literal != null ? literal : template.getExpressionString()) + "'";
    }

    private static String capitalized(String text) {
        return Character.toUpperCase(text.charAt(0)) + text.substring(1);
    }
}
