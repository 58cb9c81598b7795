package dev.lease.aop;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.common.CompositeStringExpression;
import org.springframework.expression.common.LiteralExpression;
import org.springframework.expression.common.TemplateParserContext;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.CompoundExpression;
import org.springframework.expression.spel.ast.PropertyOrFieldReference;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;

import dev.lease.LeaseConfigurationException;

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

    /** What {@link #samples} puts in place of each {@code #{...}} part; the first one is shown in messages. */
    static final List<String> FILLS = List.of("0", "a", "");

    /**
     * @param where the annotated method and its lease, for messages
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
                throw new LeaseConfigurationException(where + ": " + subject(attribute, text) + " is refused: "
                        + ex.getMessage(),
                        "give it a non-blank value that names what the lease protects, e.g. \"" + literalExample + "\".");
            }
        }
        try {
            return new NameTemplate(null, PARSER.parseExpression(text, TEMPLATE));
        }
        catch (ParseException ex) {
            throw new LeaseConfigurationException(where + ": " + subject(attribute, text) + " is not a valid SpEL "
                    + "template (" + ex.getMessage() + ").", "write it as text with #{...} parts, e.g. \"" + templateExample + "\".");
        }
    }

    /**
     * Refuses, at startup, a {@code #variable} that calls will not define: it would evaluate to null and fail every
     * call. The variables are those of the {@link MethodBasedEvaluationContext} each call is evaluated in:
     * {@code #p0}, {@code #a0}... per parameter and the parameter names when they were compiled in; SpEL adds
     * {@code #root} and {@code #this}.
     *
     * @param where the annotated method and its lease, for messages
     * @param attribute the attribute the template comes from
     */
    NameTemplate checkVariables(String where, String attribute, Method method, ParameterNameDiscoverer discoverer) {
        if (template == null) {
            return this;
        }
        String[] names = discoverer.getParameterNames(method);
        int count = names != null ? names.length : method.getParameterCount();
        Set<String> defined = new HashSet<>(List.of("root", "this"));
        List<String> parameters = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String name = names != null ? names[i] : null;
            defined.add("p" + i);
            defined.add("a" + i);
            if (name != null) {
                defined.add(name);
            }
            parameters.add(name != null ? name + " (#p" + i + ")" : "#p" + i);
        }
        for (String variable : variables()) {
            if (defined.contains(variable)) {
                continue;
            }
            String refers = where + ": " + subject(attribute, template.getExpressionString()) + " refers to #"
                    + variable;
            if (names == null && count > 0 && !variable.matches("[pa]\\d+")) {
                throw new LeaseConfigurationException(refers + ", but the parameter names of the method are not "
                        + "available (its class was compiled without -parameters), so arguments can only be referred to "
                        + "by position: " + String.join(", ", parameters) + ".",
                        "compile with -parameters (spring-boot-starter-parent and Spring Boot's Gradle plugin set it), "
                                + "or refer to the argument by its position, e.g. #p0 for the first one.");
            }
            throw new LeaseConfigurationException(refers + ", which the method does not define: "
                    + (count == 0 ? "it has no parameters."
                            : "its parameters are " + String.join(", ", parameters) + "."),
                    count == 0 ? "build it from #root (e.g. #root.methodName), or use a literal."
                            : "refer to an argument by its parameter name"
                                    + (names != null && names[0] != null ? ", e.g. #" + names[0] : "")
                                    + ", or by its position, e.g. #p0 for the first one.");
        }
        return this;
    }

    /**
     * Whether a {@code #{...}} part reads {@code property} of the root object, as {@code #{period}} does.
     *
     * @param property the root object's property
     */
    boolean readsRootProperty(String property) {
        if (template == null) {
            return false;
        }
        for (Expression part : parts()) {
            if (part instanceof SpelExpression spel) {
                SpelNode first = spel.getAST() instanceof CompoundExpression compound ? compound.getChild(0)
                        : spel.getAST();
                if (first instanceof PropertyOrFieldReference reference && reference.getName().equals(property)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Every {@code #variable} the template reads. */
    private Set<String> variables() {
        Set<String> found = new LinkedHashSet<>();
        for (Expression part : parts()) {
            if (part instanceof SpelExpression spel) {
                collectVariables(spel.getAST(), found);
            }
        }
        return found;
    }

    private static void collectVariables(SpelNode node, Set<String> found) {
        if (node instanceof VariableReference) {
            found.add(node.toStringAST().substring(1));
        }
        for (int i = 0; i < node.getChildCount(); i++) {
            collectVariables(node.getChild(i), found);
        }
    }

    private Expression[] parts() {
        return template instanceof CompositeStringExpression composite ? composite.getExpressions()
                : new Expression[] {template};
    }

    /**
     * What a template's literal parts make of a name whatever its {@code #{...}} parts evaluate to: the names it gives
     * when every part evaluates to {@code fill}. A rule that the names of every fill in {@link #FILLS} break is broken
     * by the literal parts alone: a digit or a letter can stand wherever a name may hold one, and the empty fill shows
     * a literal part too long on its own.
     *
     * @return the names of the template with each fill, in the order of {@link #FILLS}; the literal alone when there
     *         is no template
     */
    List<String> samples() {
        if (literal != null) {
            return List.of(literal);
        }
        List<String> samples = new ArrayList<>();
        for (String fill : FILLS) {
            StringBuilder name = new StringBuilder();
            for (Expression part : parts()) {
                name.append(part instanceof LiteralExpression text ? text.getExpressionString() : fill);
            }
            samples.add(name.toString());
        }
        return samples;
    }

    /** The text as written in the annotation: the literal, or the template with its {@code #{...}} parts. */
    String declared() {
        return literal != null ? literal : template.getExpressionString();
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
        EvaluationContext evaluation = context.get();
        StringBuilder name = new StringBuilder();
        for (Expression part : parts()) {
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
        return "'" + declared() + "'";
    }

    /** The lease name is already quoted in {@code where}; other attributes are quoted here. */
    private static String subject(String attribute, String text) {
        return attribute.equals("name") ? "the name" : attribute + " \"" + text + "\"";
    }

    private static String capitalized(String text) {
        return Character.toUpperCase(text.charAt(0)) + text.substring(1);
    }
}
