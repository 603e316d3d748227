package calc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import org.junit.jupiter.api.Test;

public class CalcTest {
    @Test public void adds() { assertEquals(5, Calc.add(2, 3)); }
    @Test public void addsZero() { assertEquals(0, Calc.add(0, 0)); }
}
