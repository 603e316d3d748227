require "minitest/autorun"

class EmptyTest < Minitest::Test
end
