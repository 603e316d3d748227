// CppUnit sample (TextUi runner): CALC_BROKEN=1 makes one test fail.
#include <cppunit/extensions/HelperMacros.h>
#include <cppunit/extensions/TestFactoryRegistry.h>
#include <cppunit/ui/text/TestRunner.h>
#include <cstdlib>
static int add(int a, int b) { return std::getenv("CALC_BROKEN") ? a - b : a + b; }
class CalcTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(CalcTest);
    CPPUNIT_TEST(adds);
    CPPUNIT_TEST(addsZero);
    CPPUNIT_TEST_SUITE_END();
public:
    void adds() { CPPUNIT_ASSERT_EQUAL(5, add(2, 3)); }
    void addsZero() { CPPUNIT_ASSERT_EQUAL(0, add(0, 0)); }
};
CPPUNIT_TEST_SUITE_REGISTRATION(CalcTest);
int main() {
    CppUnit::TextUi::TestRunner runner;
    runner.addTest(CppUnit::TestFactoryRegistry::getRegistry().makeTest());
    return runner.run() ? 0 : 1;
}
