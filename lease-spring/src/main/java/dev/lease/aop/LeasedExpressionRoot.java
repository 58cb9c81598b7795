package dev.lease.aop;

import java.lang.reflect.Method;

/**
 * The {@code #root} object of a lease name template: {@code #root.args[0]}, {@code #root.methodName},
 * {@code #root.target}. Open only to the {@code @Once} key's root, which adds {@code #{period}}: its constructor is
 * package-private.
 */
public class LeasedExpressionRoot {

    private final Method method;
    private final Object[] args;
    private final Object target;

    LeasedExpressionRoot(Method method, Object[] args, Object target) {
        this.method = method;
        this.args = args;
        this.target = target;
    }

    /** The called method. */
    public Method getMethod() {
        return method;
    }

    /** The name of the called method. */
    public String getMethodName() {
        return method.getName();
    }

    /** The call's arguments. */
    public Object[] getArgs() {
        return args;
    }

    /** The bean the method was called on. */
    public Object getTarget() {
        return target;
    }
}
