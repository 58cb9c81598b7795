package dev.lease.aop;

import java.lang.reflect.Method;
import java.util.Objects;
import java.util.function.UnaryOperator;

import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;

import dev.lease.LeaseConfigurationException;

/**
 * A name written in an annotation attribute of a method, as {@code @Leased} names are: a literal, or text with
 * {@code #{...}} SpEL parts over the method's arguments ({@code "invoice-#{#id}"}), parsed and checked once, at
 * startup, then evaluated per call. Annotations built on the lease library that name something per call (such as
 * {@code @FencedRequest(resource = ...)}) use it, so that every annotation reads its templates the same way and
 * fails startup the same way: a {@code #variable} the method does not define is refused, naming its real
 * parameters.
 */
public final class MethodNameTemplate {

    private static final ParameterNameDiscoverer PARAMETER_NAMES = new DefaultParameterNameDiscoverer();

    private final Method method;
    private final String describedMethod;
    private final NameTemplate template;

    private MethodNameTemplate(Method method, NameTemplate template) {
        this.method = method;
        this.describedMethod = LeasedMethod.describe(method);
        this.template = template;
    }

    /**
     * Parses and checks one attribute.
     *
     * @param method the annotated method, whose parameters the template may read
     * @param where how startup errors begin, such as {@code "@FencedRequest on Payments.pay(long)"}
     * @param attribute the attribute's name, such as {@code "resource"}
     * @param text the attribute's value
     * @param validate checks a literal (and, per call, an evaluated name), throwing {@link IllegalArgumentException}
     *        saying why it is refused; returns the name
     * @param literalExample a valid literal, shown in the fix
     * @param templateExample a valid template, shown in the fix
     * @return the parsed template
     * @throws LeaseConfigurationException when the text is refused, is not a valid template, or reads a variable the
     *         method does not define
     */
    public static MethodNameTemplate parse(Method method, String where, String attribute, String text,
            UnaryOperator<String> validate, String literalExample, String templateExample) {
        Objects.requireNonNull(method, "method");
        NameTemplate parsed = NameTemplate.parse(where, attribute, text, validate, literalExample, templateExample)
                .checkVariables(where, attribute, method, PARAMETER_NAMES);
        return new MethodNameTemplate(method, parsed);
    }

    /**
     * The name for one call.
     *
     * @param what how messages name it, such as {@code "the resource of @FencedRequest"}
     * @param target the object the method is called on, {@code #root.target}
     * @param args the call's arguments
     * @return the evaluated name
     * @throws IllegalArgumentException when a {@code #{...}} part evaluates to null
     */
    public String evaluate(String what, Object target, Object[] args) {
        return template.evaluate(what + " of " + describedMethod, () -> new MethodBasedEvaluationContext(
                new LeasedExpressionRoot(method, args, target), method, args, PARAMETER_NAMES));
    }

    /**
     * Whether the name is the same for every call.
     *
     * @return true when the attribute has no {@code #{...}} part
     */
    public boolean isLiteral() {
        return template.literal() != null;
    }

    /**
     * The text as written in the annotation, such as {@code invoice-#{#id}}: a low-cardinality tag or log value.
     *
     * @return the literal or the template as written
     */
    public String declared() {
        return template.declared();
    }

    /**
     * How messages name a method: {@code InvoiceService.bill(long)}.
     *
     * @param method a method
     * @return its simple class name, name and parameter types
     */
    public static String describe(Method method) {
        return LeasedMethod.describe(method);
    }

    @Override
    public String toString() {
        return template.describe();
    }
}
