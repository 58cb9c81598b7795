package dev.lease.aop;

import java.lang.reflect.Method;
import java.util.function.Supplier;

/**
 * The {@code #root} object of a {@code @Once} key template: {@code #{period}}, and what lease name templates read
 * ({@code #root.args[0]}, {@code #root.methodName}, {@code #root.target}).
 */
public final class OnceExpressionRoot extends LeasedExpressionRoot {

    private final Supplier<String> period;

    OnceExpressionRoot(Method method, Object[] args, Object target, Supplier<String> period) {
        super(method, args, target);
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
}
