package dev.lease.aop;

import java.lang.reflect.Method;
import java.util.function.Supplier;

/**
 * The {@code #root} object of a {@code @Once} key template: {@code #{period}}, {@code #root.args[0]},
 * {@code #root.methodName}, {@code #root.target}.
 */
public final class OnceExpressionRoot {

    private final Method method;
    private final Object[] args;
    private final Object target;
    private final Supplier<String> period;

    OnceExpressionRoot(Method method, Object[] args, Object target, Supplier<String> period) {
        this.method = method;
        this.args = args;
        this.target = target;
        this.period = period;
    }

    /**
     * The nominal time of the current tick of the method's {@code @Scheduled} trigger, such as
     * {@code 2026-12-06T02:00:00}; see {@link dev.lease.Once#key()}.
     *
     * @return the period
     */
    public String getPeriod() {
        return period.get();
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
